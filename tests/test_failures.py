"""The end-of-run summary of failed dialogues (lecode.failures), worked out by hand from the
messages the LLM layer writes."""

from __future__ import annotations

import json
from pathlib import Path

from lecode.failures import cause_of, read_failures, summary
from lecode.llm.errors import LLMCallError, failure_summary

URL = "http://127.0.0.1:9/v1/chat/completions"
REFUSED = (
    f"model 'dead' at {URL} (expert/turn): connection after 7 attempt(s): connection error: "
    "ClientConnectorError: Cannot connect to host 127.0.0.1:9"
)
HTTP_500 = f"model 'dead' at {URL} (client/answer): server after 2 attempt(s): HTTP 500: boom"


def test_cause_of_reads_url_and_failure_class() -> None:
    assert cause_of(REFUSED) == (URL, "connection")
    assert cause_of(HTTP_500) == (URL, "server (HTTP 500)")
    assert cause_of("expert asked a question after 3 questions") == (
        "-",
        "expert asked a question after 3 questions",
    )


def _shard(path: Path, stops: list[tuple[str, str | None]]) -> str:
    lines = [
        json.dumps({"case_id": f"c{i}", "stop_reason": stop, "error": error})
        for i, (stop, error) in enumerate(stops)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_summary_by_system_endpoint_and_class(tmp_path: Path) -> None:
    a = _shard(tmp_path / "a.jsonl", [("error", REFUSED), ("error", REFUSED), ("error", HTTP_500)])
    b = _shard(tmp_path / "b.jsonl", [("error", REFUSED)])
    dead = read_failures("dead/zero_shot", [a, b, str(tmp_path / "missing.jsonl")])
    assert (dead.dialogues, dead.failed, dead.all_failed) == (4, 4, True)
    ok = _shard(tmp_path / "c.jsonl", [("advice", None), ("error", HTTP_500)])
    partly = read_failures("m/mediq", [ok])
    assert (partly.dialogues, partly.failed, partly.all_failed) == (2, 1, False)
    assert summary([dead, partly]) == [
        "system dead/zero_shot: 4/4 dialogues failed (every one failed)",
        f"  3 x connection at {URL}",
        f"  1 x server (HTTP 500) at {URL}",
        "system m/mediq: 1/2 dialogues failed (retried on the next run)",
        f"  1 x server (HTTP 500) at {URL}",
    ]


def test_failure_summary_of_call_errors() -> None:
    def err(kind: str, status: int | None) -> LLMCallError:
        return LLMCallError(
            "x", kind=kind, model="judge", attempts=1, retries=0, status=status, endpoint=URL
        )  # type: ignore[arg-type]

    errors = [err("server", 500), err("client_error", 401), err("server", 500)]
    assert failure_summary(errors) == [
        f"2 call(s) of model 'judge' to {URL}: server (HTTP 500)",
        f"1 call(s) of model 'judge' to {URL}: client_error (HTTP 401)",
    ]


def test_matching_failures_leave_out_the_dialogues_that_failed(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    rows = [
        {"case_id": "a", "status": "error", "error": "the dialogue itself failed"},
        {"case_id": "b", "status": "error", "error": HTTP_500},
        {"case_id": "c", "status": "error", "error": HTTP_500},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = read_failures("s/x", [str(path)], "matching")
    assert (got.dialogues, got.failed, got.all_failed) == (2, 2, True)
    assert summary([got]) == [
        "system s/x: 2/2 dialogues: matching failed (every one failed)",
        f"  2 x server (HTTP 500) at {URL}",
    ]
