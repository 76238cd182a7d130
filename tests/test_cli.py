from __future__ import annotations

from pathlib import Path

import pytest

from lecode.cli import main
from lecode.dataset import load_cases
from lecode.recordio import write_transcripts
from lecode.records import Transcript, Turn
from tests.conftest import raw_case, write_jsonl


def _transcript(case_id: str, stop: str) -> Transcript:
    turns = [Turn(speaker="client", kind="query", text="问")]
    if stop == "advice":
        turns.append(Turn(speaker="lawyer", kind="advice", text="建议"))
    return Transcript(
        case_id=case_id,
        expert="e",
        strategy="zero_shot",
        client="c",
        turns=tuple(turns),
        stop_reason=stop,  # type: ignore[arg-type]
        error="HTTP 500 after 5 attempts" if stop == "error" else None,
    )


def test_retry_errors_removes_only_shards_with_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard_dir = tmp_path / "results" / "transcripts" / "e" / "zero_shot" / "abc" / "set"
    ok = shard_dir / "000.jsonl"
    bad = shard_dir / "001.jsonl"
    write_transcripts(ok, [_transcript("a", "advice")])
    write_transcripts(bad, [_transcript("b", "advice"), _transcript("c", "error")])
    results = str(tmp_path / "results")
    assert main(["retry-errors", "--results", results, "--dry-run"]) == 0
    assert bad.exists()
    assert main(["retry-errors", "--results", results]) == 0
    assert ok.exists() and not bad.exists()
    assert "1 failed dialogue(s) in 1 shard(s)" in capsys.readouterr().out


def test_validate_reports_problems_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [raw_case("a")])
    bad = write_jsonl(tmp_path / "bad.jsonl", [raw_case("b", initial_query="")])
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1: record 'b': field 'initial_query'" in err


def test_split_writes_deterministic_train_and_test(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "all.jsonl", [raw_case(f"id-{i:02d}") for i in range(20)])
    out = tmp_path / "out"
    assert main(["split", str(src), "--out-dir", str(out), "--prefix", "X"]) == 0
    train = load_cases(out / "X_trainset.jsonl")
    test = load_cases(out / "X_testset.jsonl")
    assert (len(train), len(test)) == (16, 4)
    first = (out / "X_testset.jsonl").read_bytes()
    assert main(["split", str(src), "--out-dir", str(out), "--prefix", "X"]) == 0
    assert (out / "X_testset.jsonl").read_bytes() == first
