"""The metric stack's self-test: golden numbers to 1e-6; loud when anything moves a number."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import jieba
import pytest

from lecode import selftest, text
from lecode.metrics import advice
from lecode.metrics.advice import PACKAGED_MODEL, resolve_model

EXPECTED = json.loads((selftest.DATA_DIR / selftest.EXPECTED).read_text(encoding="utf-8"))


def test_the_installed_stack_reproduces_every_recorded_number() -> None:
    result = selftest.run_selftest()
    assert result.ok, selftest.format_result(result)
    names = {c.name for c in result.checks}
    for metric in selftest.DIALOGUE_METRICS:
        assert f"dialogues/st-1/{metric}" in names
    for metric in ("rouge_l", "rouge_l_no_punctuation", "bertscore_f1"):
        assert f"pairs/paraphrase/{metric}" in names
    assert not result.drift or all(k == "scoring_code" for k, _, _ in result.drift)


def test_recorded_versions_and_hashes() -> None:
    stack = EXPECTED["stack"]
    for key in ("jieba", "jieba_dict_sha256", "rouge-score", "bert-score", "scoring_code"):
        assert stack[key]
    (entry,) = [e for e in EXPECTED["bertscore"].values() if e["stack"]["bertscore_model"]]
    assert entry["stack"]["bertscore_model"] == PACKAGED_MODEL
    assert entry["stack"]["bertscore_num_layers"] == "4"
    assert len(entry["stack"]["bertscore_model_sha256"]) == 64


def test_clarification_numbers_match_the_hand_derivations() -> None:
    d = EXPECTED["numbers"]["dialogues"]
    log2 = math.log2
    assert d["st-1"]["recall"] == d["st-1"]["weighted_recall"] == d["st-1"]["recall_at_5"] == 0.75
    assert d["st-1"]["ndcg"] == pytest.approx(3.5 / (5 + 1 / log2(3)), abs=1e-12)
    assert d["st-1"]["turns"] == 3
    assert d["st-2"]["recall"] == pytest.approx(5 / 6, abs=1e-12)
    assert d["st-2"]["weighted_recall"] == pytest.approx(10 / 12, abs=1e-12)
    assert d["st-2"]["recall_at_5"] == 0.5
    dcg = 3 + 1 / log2(5) + 1 / log2(6) + 5 / log2(7)
    idcg = 5 + 3 / log2(3) + 1 / 2 + 1 / log2(5)
    assert d["st-2"]["ndcg"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert d["st-2"]["turns"] == 6
    assert d["st-3"]["recall"] == d["st-3"]["ndcg"] == 0 and d["st-3"]["rouge_l"] is None
    assert all(v is None for v in d["st-4"].values())
    pairs = EXPECTED["numbers"]["pairs"]
    assert pairs["identical"]["rouge_l"] == 1.0 and pairs["empty-candidate"]["rouge_l"] == 0.0


def test_tolerance_is_1e_6() -> None:
    assert selftest.Check("x", 0.5, 0.5 + 9e-7).ok
    assert not selftest.Check("x", 0.5, 0.5 + 2e-6).ok
    assert selftest.Check("x", None, None).ok and not selftest.Check("x", None, 0.0).ok


@pytest.fixture
def fresh_jieba_cache() -> Iterator[None]:
    text._cut.cache_clear()
    yield
    text._cut.cache_clear()


def test_a_changed_tokenizer_dictionary_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba_cache: None
) -> None:
    small = tmp_path / "dict.txt"
    small.write_text("律师 100 n\n赔偿 100 v\n建议 100 v\n仲裁 100 n\n", encoding="utf-8")
    tokenizer = jieba.Tokenizer(dictionary=str(small))
    monkeypatch.setattr(jieba, "dt", tokenizer)
    monkeypatch.setattr(jieba, "lcut", tokenizer.lcut)
    result = selftest.run_selftest(bertscore=False)
    assert not result.ok
    failed = {c.name for c in result.failures}
    assert "dialogues/st-1/rouge_l" in failed and "pairs/paraphrase/rouge_l" in failed
    assert not any("recall" in n or "ndcg" in n for n in failed)  # no library behind those
    assert "jieba_dict_sha256" in {k for k, _, _ in result.drift}
    report = selftest.format_result(result)
    assert "selftest: FAILED" in report and "what differs from the recording:" in report
    assert "jieba_dict_sha256: recorded 7197c321" in report


def test_a_library_that_moves_a_number_fails_and_names_the_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    original = advice.RougeL.score
    monkeypatch.setattr(advice.RougeL, "score", lambda self, c, r: original(self, c, r) + 1e-5)
    versions = advice.metric_stack_versions()
    monkeypatch.setattr(
        advice, "metric_stack_versions", lambda: {**versions, "rouge-score": "0.1.3"}
    )
    assert selftest.main(["--skip-bertscore"]) == 1
    err = capsys.readouterr().err
    assert "selftest: FAILED" in err and "(diff +1e-05)" in err
    assert "rouge-score: recorded 0.1.2, now 0.1.3" in err


def test_a_version_change_that_moves_nothing_is_a_note(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    versions = advice.metric_stack_versions()
    monkeypatch.setattr(advice, "metric_stack_versions", lambda: {**versions, "jieba": "0.42.2"})
    assert selftest.main(["--skip-bertscore"]) == 0
    out = capsys.readouterr().out
    assert "selftest: OK" in out and "note: stack changed" in out
    assert selftest.main(["--skip-bertscore", "--strict"]) == 1


def test_a_changed_bertscore_number_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # the code fingerprint as recorded: only the metric's number moves, nothing in the stack
    monkeypatch.setattr(selftest, "scoring_code_hash", lambda: EXPECTED["stack"]["scoring_code"])
    recorded = EXPECTED["bertscore"]
    (entry,) = recorded.values()
    pairs = entry["numbers"]["pairs"]

    def fake(self: object, cands: list[str], refs: list[str]) -> list[float]:
        # the recorded value of each pair, except one that moved by 1e-4
        out = []
        for c, r in zip(cands, refs, strict=True):
            key = next(
                (k for k, p in _pairs().items() if (p["candidate"], p["reference"]) == (c, r)),
                None,
            )
            value = pairs[key]["bertscore_f1"] if key else 0.5
            out.append(value + (1e-4 if key == "paraphrase" else 0.0))
        return out

    monkeypatch.setattr(advice.BertScorer, "score", fake)
    result = selftest.run_selftest()
    failed = {c.name for c in result.failures}
    assert "pairs/paraphrase/bertscore_f1" in failed
    assert "no recorded version or hash differs" in selftest.format_result(result)


def _pairs() -> dict[str, dict[str, str]]:
    lines = (selftest.DATA_DIR / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(x)["id"]: json.loads(x) for x in lines if x.strip()}


def test_a_changed_model_file_fails_before_the_model_loads(tmp_path: Path) -> None:
    model = resolve_model(PACKAGED_MODEL)
    copy = tmp_path / "model"
    copy.mkdir()
    for f in model.iterdir():
        if f.name == "config.json":
            data = json.loads(f.read_text(encoding="utf-8"))
            data["lecode_test_marker"] = 1
            (copy / f.name).write_text(json.dumps(data), encoding="utf-8")
        elif f.is_file():
            (copy / f.name).symlink_to(f)
        else:
            shutil.copytree(f, copy / f.name)
    result = selftest.run_selftest(model=str(copy))
    assert not result.ok
    assert any("no BERTScore expectations" in n for n in result.notes)
    assert "bertscore/expectations-recorded" in {c.name for c in result.failures}


def test_update_records_a_new_model_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    shutil.copytree(selftest.DATA_DIR, data)
    monkeypatch.setattr(selftest, "current_stack", _fake_stack)
    real = resolve_model(PACKAGED_MODEL)
    monkeypatch.setattr(advice, "resolve_model", lambda spec: real)
    monkeypatch.setattr(advice.BertScorer, "score", lambda self, c, r: [0.25] * len(c))
    selftest.record(data, model="other-model", num_layers=2)
    written = json.loads((data / selftest.EXPECTED).read_text(encoding="utf-8"))
    assert set(written["bertscore"]) == set(EXPECTED["bertscore"]) | {"f" * 64 + ":L2"}
    assert written["numbers"] == EXPECTED["numbers"]


def _fake_stack(model: str, num_layers: int, *, bertscore: bool = True) -> dict[str, str]:
    return {
        "jieba": "0.42.1",
        "scoring_code": "x",
        "bertscore_model": model,
        "bertscore_model_sha256": "f" * 64,
        "bertscore_num_layers": str(num_layers),
        "bert-score": "0.3.13",
        "transformers": "t",
        "torch": "t",
    }
