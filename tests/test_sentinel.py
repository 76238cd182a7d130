"""The judge-drift sentinel: agreement worked out by hand, the shipped anchors agreeing with
the mock judge, a drifted mock judge failing the run, a fresh epoch asking the endpoint again
and the same epoch reading the store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.config.experiment import Settings
from lecode.mock import MockServer
from lecode.sentinel import agreement, load_anchors, load_stored
from lecode.sentinel.specs import SentinelSpec
from lecode.sentinel.steps.judge_sentinel import run
from lecode.specs import FileRef, LLMRuntimeSpec, Role
from tests.support.mock_llm import KEY_ENV, model_dict

REPO = Path(__file__).resolve().parent.parent
ANCHORS = REPO / "data" / "anchors" / "judge_anchors.jsonl"
STORED = REPO / "data" / "anchors" / "judge_anchor_scores.json"


def test_agreement_by_hand() -> None:
    stored = {
        "a": {
            "professionalism": 5,
            "fluency": 5,
            "completeness": 5,
            "satisfaction": 5,
            "safety": 5,
            "overall": 5,
        },
        "b": {"professionalism": 8, "overall": 8},
    }
    fresh = {
        # within ±1 on 5 of 6 (completeness is 3 off)
        "a": {
            "professionalism": 6,
            "fluency": 4,
            "completeness": 8,
            "satisfaction": 5,
            "safety": 5,
            "overall": 5,
        },
        "b": None,  # the judge failed: both of b's stored scores disagree
    }
    share, agree, total = agreement(fresh, stored, 1)
    assert (agree, total) == (5, 8) and share == pytest.approx(5 / 8)
    assert agreement(fresh, stored, 3)[1] == 6
    # b's call failed at the endpoint (absent from fresh): not a judgement, not compared
    del fresh["b"]
    assert agreement(fresh, stored, 1) == (pytest.approx(5 / 6), 5, 6)


def test_shipped_anchors_and_stored_judgements() -> None:
    anchors = load_anchors(ANCHORS)
    assert len(anchors) == 6 and len({a.id for a in anchors}) == 6
    stored = load_stored(STORED, "mock")
    assert stored is not None and set(stored) == {a.id for a in anchors}
    assert load_stored(STORED, "gpt-4o-mini") is None
    t = anchors[0].transcript()
    assert t.advice == anchors[0].advice and t.turns[0].kind == "query"


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    monkeypatch.chdir(tmp_path)
    with MockServer() as server:
        yield server


def _spec(
    url: str, tmp_path: Path, epoch: str, threshold: float = 0.8, **cfg: object
) -> SentinelSpec:
    entry = Settings.parse(
        {
            "dataset": {"train": "x", "test": "x", "n_shards": 1},
            "models": {"mock": model_dict(url, **cfg)},
            "experts": [{"model": "mock", "strategy": "zero_shot"}],
            "client": {"model": "mock"},
            "matcher": {"model": "mock"},
            "metrics": {"bertscore": {"model": "x", "num_layers": 1}},
        }
    ).models["mock"]
    return SentinelSpec(
        judge=Role(name="mock", entry=entry),
        anchors=FileRef.of(ANCHORS),
        stored=FileRef.of(STORED),
        threshold=threshold,
        tolerance=1,
        epoch=epoch,
        code="test",
        runtime=LLMRuntimeSpec(
            llm={"store_dir": str(tmp_path / "store")},  # type: ignore[arg-type]
            models={"mock": entry},
        ),
    )


def test_the_mock_judge_agrees_and_each_epoch_asks_anew(mock: MockServer, tmp_path: Path) -> None:
    result = run(_spec(mock.url, tmp_path, "e1"), out_dir=str(tmp_path / "s1"))
    assert result["status"] == "ok" and result["agreement"] == 1.0 and result["compared"] == 36
    assert mock.requests_by_role() == {"judge": 6}
    assert (tmp_path / "s1" / "judge_sentinel.md").is_file()
    run(_spec(mock.url, tmp_path, "e1"), out_dir=str(tmp_path / "s2"))  # same run: the store
    assert mock.requests_by_role() == {"judge": 6}
    run(_spec(mock.url, tmp_path, "e2"), out_dir=str(tmp_path / "s3"))  # a new scoring run
    assert mock.requests_by_role() == {"judge": 12}


def test_a_drifted_judge_fails_the_run(mock: MockServer, tmp_path: Path) -> None:
    from lecode.sentinel import JudgeDriftError

    mock.set_faults({"judge_drift": 1.0})
    with pytest.raises(JudgeDriftError, match="drifted"):
        run(_spec(mock.url, tmp_path, "e1"), out_dir=str(tmp_path / "s"))
    result = (tmp_path / "s" / "judge_sentinel.json").read_text(encoding="utf-8")
    assert '"status": "drift"' in result


def test_a_failing_judge_endpoint_is_reported_as_such_not_as_drift(
    mock: MockServer, tmp_path: Path
) -> None:
    """Every judge call answers HTTP 500: no judgement was made, so no drift verdict; the error
    names the endpoint, the failure and how many calls failed."""
    from lecode.sentinel import JudgeUnreachableError

    mock.set_faults({"server_error": 1.0}, roles=["judge"])
    with pytest.raises(JudgeUnreachableError) as err:
        run(_spec(mock.url, tmp_path, "e1", max_retries=1), out_dir=str(tmp_path / "s"))
    text = str(err.value)
    assert "drift" not in text
    assert f"6 call(s) of model 'mock' to {mock.url}/chat/completions: server (HTTP 500)" in text
    assert "6 of 6 anchor judgements" in text and "0/0 scores" in text
    assert mock.stats()["total_requests"] == 12  # each anchor: one attempt and one retry
    result = json.loads((tmp_path / "s" / "judge_sentinel.json").read_text(encoding="utf-8"))
    assert result["status"] == "endpoint_error" and len(result["failed_calls"]) == 6


def test_a_failed_anchor_call_does_not_count_as_disagreement(
    mock: MockServer, tmp_path: Path
) -> None:
    """One anchor's call answers 401 (not retried): the five judged anchors agree on all 30
    scores, and the run still fails, naming the 401, because one anchor went unchecked."""
    from lecode.sentinel import JudgeUnreachableError

    first = load_anchors(ANCHORS)[0]
    mock.set_faults({"unauthorized_echo": 1.0}, roles=["judge"], match=first.initial_query)
    with pytest.raises(JudgeUnreachableError) as err:
        run(_spec(mock.url, tmp_path, "e1"), out_dir=str(tmp_path / "s"))
    text = str(err.value)
    assert "1 of 6 anchor judgements" in text and "30/30 scores" in text
    assert "1 call(s) of model 'mock'" in text and "client_error (HTTP 401)" in text
    assert "drifted" not in text


def test_failed_calls_beside_drifted_judgements_report_both(
    mock: MockServer, tmp_path: Path
) -> None:
    """One anchor's call fails (401) and the judge drifted on the other five: the error names
    the failed call and keeps the drift verdict of the 30 scores that were judged (0 agree:
    every score moved down by 3, more than the tolerance of 1)."""
    from lecode.sentinel import JudgeUnreachableError

    first = load_anchors(ANCHORS)[0]
    mock.set_faults(
        {"unauthorized_echo": 1.0, "judge_drift": 1.0}, roles=["judge"], match=first.initial_query
    )
    with pytest.raises(JudgeUnreachableError) as err:
        run(_spec(mock.url, tmp_path, "e1"), out_dir=str(tmp_path / "s"))
    text = str(err.value)
    assert "1 of 6 anchor judgements" in text and "client_error (HTTP 401)" in text
    assert "0/30 scores of the judged anchors agree, below judge_sentinel.threshold=80%" in text
