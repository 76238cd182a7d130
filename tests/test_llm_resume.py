"""Kill a simulation job mid-shard with SIGKILL, rerun: nothing that finished is requested
again, and the transcripts equal those of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lecode.mock import MockServer
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import KEY_ENV

CONCURRENCY = 2
REPO = Path(__file__).resolve().parents[1]
JOB = textwrap.dedent(
    f"""
    import asyncio, json, sys
    sys.path.insert(0, {str(REPO)!r})  # tests.support
    from lecode.agents.clients import build_client
    from lecode.agents.context import RoleContext
    from lecode.agents.experts import build_expert
    from lecode.dataset import load_cases
    from tests.support.mock_llm import model_cfg, runtime
    from lecode.recordio import write_transcripts
    from lecode.evaluation.consultations import DialogueJournal, simulate_cases

    cases_path, url, store, journal, out = sys.argv[1:6]
    cases = load_cases(cases_path)
    rt = runtime(store, max_turns=10)
    ctx = RoleContext(runtime=rt)
    cfg = model_cfg(url, concurrency={CONCURRENCY})
    expert = build_expert("e", cfg, "zero_shot", ctx)
    client = build_client("c", cfg, "first_person_dialogue", ctx)
    ts = asyncio.run(simulate_cases(cases, expert, client, strategy="zero_shot", max_turns=10,
                                    journal=DialogueJournal(journal)))
    rt.close()
    write_transcripts(out, ts)
    """
)


def _job(tmp: Path, url: str, name: str) -> list[str]:
    return [
        sys.executable,
        str(tmp / "job.py"),
        str(tmp / "cases.jsonl"),
        url,
        str(tmp / name / "store"),
        str(tmp / name / "journal.jsonl"),
        str(tmp / name / "out.jsonl"),
    ]


def _journal_lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


@pytest.mark.timeout(180)
def test_kill_9_mid_shard_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    (tmp_path / "job.py").write_text(JOB)
    write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(24))
    env = {**os.environ, KEY_ENV: "sk-test-0123456789abcdef"}
    with MockServer(case_files=[tmp_path / "cases.jsonl"], latency=0.02) as mock:
        # reference: one uninterrupted run
        subprocess.run(_job(tmp_path, mock.url, "ref"), check=True, env=env, timeout=120)
        mock.reset()
        # interrupted run: SIGKILL once a few dialogues are journaled
        proc = subprocess.Popen(_job(tmp_path, mock.url, "run"), env=env)
        journal = tmp_path / "run" / "journal.jsonl"
        deadline = time.monotonic() + 60
        while _journal_lines(journal) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        finished = _journal_lines(journal)
        assert 5 <= finished < 24, "kill landed outside the shard"
        assert not (tmp_path / "run" / "out.jsonl").exists()
        first = mock.stats()
        mock.reset()
        subprocess.run(_job(tmp_path, mock.url, "run"), check=True, env=env, timeout=120)
        second = mock.stats()
    # Replies still in flight when the job was killed (at most `concurrency` of them) were
    # served but never stored; every earlier reply was stored and must not be asked again.
    served_before = set(first["served"][:-CONCURRENCY])
    requested_again = {e["digest"] for e in second["log"]}
    assert not served_before & requested_again, "a finished request was sent again"
    assert second["total_requests"] > 0
    ref = (tmp_path / "ref" / "out.jsonl").read_text()
    run = (tmp_path / "run" / "out.jsonl").read_text()
    strip = (
        [json.loads(line) for line in ref.splitlines()],
        [json.loads(line) for line in run.splitlines()],
    )
    for a, b in zip(*strip, strict=True):
        a.pop("usage"), b.pop("usage")
        assert a == b
    # a third run touches nothing at all
    with MockServer(case_files=[tmp_path / "cases.jsonl"]) as idle:
        subprocess.run(_job(tmp_path, idle.url, "run"), check=True, env=env, timeout=120)
        assert idle.stats()["total_requests"] == 0
