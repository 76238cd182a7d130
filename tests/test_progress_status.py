"""Progress lines of long jobs (lecode.progress) and ``lecode status`` (lecode.status), with
numbers computed by hand."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lecode import paths
from lecode.cli import main
from lecode.config.experiment import Settings
from lecode.pipeline import Plan
from lecode.progress import Progress, duration, failure_kind
from lecode.recordio import dumps, write_matches, write_transcripts
from lecode.records import Matches, RoleUsage, Transcript, Turn
from lecode.status import Reader, collect, incomplete_outputs, last_progress, render
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import entry


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _progress(clock: Clock, caplog: pytest.LogCaptureFixture, **kw: object) -> Progress:
    caplog.set_level(logging.INFO, logger="lecode.progress")
    return Progress("simulate m/zero_shot 003", clock=clock, **kw)  # type: ignore[arg-type]


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "lecode.progress"]


def test_progress_logs_every_five_percent_with_eta_from_this_runs_rate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    usage = RoleUsage(calls=7, cached=2, retries=1, prompt_tokens=20, completion_tokens=10)
    p = _progress(clock, caplog, usage=lambda: usage)
    p.start(100, done=20)  # 20 finished before this run: a line at the start
    assert len(_lines(caplog)) == 1
    # 5% of 100 = 5 dialogues: the next line at 25 done, not before
    for k in range(5):
        clock.t += 2.0
        p.advance("parse_error" if k == 0 else None)
        assert len(_lines(caplog)) == (1 if k < 4 else 2)
    # 5 dialogues in 10 s this run: 0.5/s; 75 left -> 150 s
    assert _lines(caplog)[-1] == (
        "progress simulate m/zero_shot 003: 25/100 dialogues (25.0%), failed 1 (parse_error 1), "
        "calls 7 (2 from the store), retries 1, tokens 30, elapsed 10s, 0.50 dialogues/s, "
        "ETA 2m30s"
    )


def test_progress_logs_every_interval_while_slow(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    p = _progress(clock, caplog, interval=30.0)
    p.start(1000)  # 5% = 50 dialogues
    assert _lines(caplog)[-1].endswith("0/1000 dialogues (0.0%), failed 0, elapsed 0s, ETA unknown")
    clock.t += 31
    p.advance()  # 1 dialogue, but 31 s since the last line
    clock.t += 9
    p.advance()  # 9 s: nothing
    assert len(_lines(caplog)) == 2
    clock.t += 21
    p.tick()  # 30 s since the last line, nothing finished: the ticker's line
    assert len(_lines(caplog)) == 3
    # 2 in 61 s; 998 left: 998 * 61 / 2 = 30439 s
    assert _lines(caplog)[-1].endswith(
        "2/1000 dialogues (0.2%), failed 0, elapsed 1m01s, 0.03 dialogues/s, ETA 8h27m19s"
    )
    p.finish()
    assert len(_lines(caplog)) == 4


def test_failure_kinds_and_durations() -> None:
    assert failure_kind("advice") is None and failure_kind("max_turns") is None
    assert failure_kind("abstain") is None and failure_kind("ok") is None
    assert failure_kind("parse_error", "expert 'x' (turn): malformed reply") == "parse_error"
    msg = "model 'm' (expert/turn): rate_limit after 7 attempt(s): HTTP 429: slow down"
    assert failure_kind("error", msg) == "rate_limit"
    assert failure_kind("error", "matcher 'm' (match): malformed reply after 2 re-ask(s)") == (
        "parse_error"
    )
    assert failure_kind("error", "something else") == "error"
    assert [duration(x) for x in (0, 59.9, 61, 3600, 3725)] == [
        "0s",
        "59s",
        "1m01s",
        "1h00m00s",
        "1h02m05s",
    ]


def test_simulate_cases_logs_progress_to_the_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from lecode.agents.clients import build_client
    from lecode.agents.context import RoleContext
    from lecode.agents.experts import build_expert
    from lecode.dataset import load_cases
    from lecode.evaluation.consultations import DialogueJournal, simulate_cases

    caplog.set_level(logging.INFO, logger="lecode.progress")
    cases = load_cases(write_jsonl(tmp_path / "c.jsonl", synthetic_cases(4)))
    ctx = RoleContext()
    expert = build_expert(
        "human_replay", entry("h", {"backend": "offline", "agent": "human_replay"}), "baseline", ctx
    )
    client = build_client(
        "fact_lookup",
        entry("f", {"backend": "offline", "agent": "fact_lookup"}),
        "first_person_dialogue",
        ctx,
    )
    journal = DialogueJournal(tmp_path / "j.jsonl")
    asyncio.run(
        simulate_cases(cases[:1], expert, client, strategy="baseline", max_turns=5, journal=journal)
    )
    caplog.clear()
    asyncio.run(
        simulate_cases(cases, expert, client, strategy="baseline", max_turns=5, journal=journal)
    )
    lines = _lines(caplog)
    assert lines[0].startswith("progress simulate human_replay/baseline: 1/4 dialogues (25.0%)")
    assert lines[-1].startswith("progress simulate human_replay/baseline: 4/4 dialogues (100.0%)")


# -- lecode status ------------------------------------------------------------------------------

LLM = {
    "backend": "openai",
    "base_url": "http://127.0.0.1:1/v1",
    "model": "m",
    "price": {"prompt": 1.0, "completion": 2.0},
}


def _project(tmp_path: Path) -> list[str]:
    data = write_jsonl(tmp_path / "data" / "test.jsonl", synthetic_cases(6))
    params = {
        "dataset": {"train": "data/test.jsonl", "test": "data/test.jsonl", "n_shards": 2},
        "models": {
            "gpt": LLM,
            "replay": {"backend": "offline", "agent": "human_replay"},
            "lexical": {"backend": "offline", "agent": "lexical"},
        },
        "experts": [
            {"model": "gpt", "strategy": "zero_shot"},
            {"model": "replay", "strategy": "baseline"},
        ],
        "client": {"model": "gpt", "strategy": "first_person_dialogue"},
        "matcher": {"model": "lexical"},
        "judge": None,
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"model": "m", "num_layers": 1}},
        "reliability": {"enabled": False},
    }
    assert data.is_file()
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True))
    return ["params.yaml"]


def _t(case_id: str, stop: str, cost: float, error: str | None = None) -> Transcript:
    turns = [Turn(speaker="client", kind="query", text="问")]
    if stop in ("advice", "max_turns"):
        turns.append(Turn(speaker="lawyer", kind="advice", text="建议"))
    return Transcript(
        case_id=case_id,
        expert="gpt",
        strategy="zero_shot",
        client="gpt",
        turns=tuple(turns),
        stop_reason=stop,  # type: ignore[arg-type]
        error=error,
        usage={
            "expert": RoleUsage(calls=1, cost=cost),
            "client": RoleUsage(calls=1, cost=cost / 2),
        },
    )


def _snakemake_standin(cwd: Path) -> subprocess.Popen[bytes]:
    """A process whose command line is ``python .../snakemake all_tables``, working in ``cwd``,
    as a running Snakemake's is."""
    script = cwd / "standin" / "snakemake"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import time\ntime.sleep(120)\n", encoding="utf-8")
    return subprocess.Popen([sys.executable, str(script), "all_tables"], cwd=cwd)


def test_status_counts_dialogues_failures_spend_and_running_shards(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(tmp_path)
    params = _project(tmp_path)
    plan = Plan(Settings.load(*params))
    ids = sorted(c["id"] for c in synthetic_cases(6))
    # the LLM system: three dialogues journaled (one a parse error), one of another test set
    journal = Path(plan.evaluation.journal("gpt", "zero_shot"))
    journal.parent.mkdir(parents=True)
    lines = [
        _t(ids[0], "advice", 0.2),
        _t(ids[1], "max_turns", 0.4),
        _t(ids[2], "parse_error", 0.1),
    ]
    lines.append(_t("not-in-the-test-set", "advice", 100.0))
    journal.write_text("".join(dumps(t) + "\n" for t in lines) + '{"torn', encoding="utf-8")
    # shard 000 finished: its transcripts hold a failed dialogue (never journaled) and matches
    err = "model 'gpt' (expert/turn): rate_limit after 7 attempt(s): HTTP 429: slow"
    write_transcripts(
        plan.evaluation.transcript("gpt", "zero_shot", "000"),
        [_t(ids[0], "advice", 0.2), _t(ids[3], "error", 0.02, err)],
    )
    write_matches(
        plan.evaluation.match("gpt", "zero_shot", "000"),
        [
            Matches(
                case_id=ids[0],
                expert="gpt",
                strategy="zero_shot",
                matcher="lexical",
                n_facts=2,
                per_question=(),
                usage={"matcher": RoleUsage(calls=1, cost=0.05)},
            ),
            Matches(
                case_id=ids[3],
                expert="gpt",
                strategy="zero_shot",
                matcher="lexical",
                n_facts=2,
                per_question=(),
                status="error",
                error="the dialogue itself failed",
            ),
        ],
    )
    # shard 001 is running: Snakemake's incomplete marker, its log with two progress lines
    out = plan.evaluation.transcript("gpt", "zero_shot", "001")
    marker = Path(".snakemake/incomplete") / base64.urlsafe_b64encode(out.encode()).decode()
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    Path(".snakemake/locks").mkdir()
    Path(".snakemake/locks/0.input.lock").write_text("")
    holder = _snakemake_standin(tmp_path)
    request.addfinalizer(holder.kill)
    log = Path(paths.format(paths.log(paths.TRANSCRIPT), **paths.parse(out)[1]))
    log.parent.mkdir(parents=True)
    log.write_text(
        "2026-01-01 10:00:00 INFO lecode.progress: progress simulate gpt/zero_shot x: 0/3\n"
        "2026-01-01 10:00:30 INFO lecode.progress: progress simulate gpt/zero_shot x: 1/3\n"
        "2026-01-01 10:00:31 INFO lecode.llm: retry 1/6 ...\n",
        encoding="utf-8",
    )
    assert incomplete_outputs(".") == [out]
    assert last_progress(log) == "progress simulate gpt/zero_shot x: 1/3"

    st = collect(params, forecasts={("gpt", "zero_shot"): 12.0, ("replay", "baseline"): 0.0})
    gpt, replay = st.systems
    assert (st.cases, st.n_shards, st.locked, st.holders) == (6, 2, True, [holder.pid])
    assert (gpt.done, gpt.total, gpt.transcripts, gpt.matches, gpt.judgements) == (3, 6, 1, 1, None)
    assert dict(gpt.failed) == {"parse_error": 1, "rate_limit": 1}
    # journal (0.2 + 0.4 + 0.1) x 1.5, the failed dialogue 0.02 x 1.5, the match 0.05
    assert gpt.spent == pytest.approx(1.05 + 0.03 + 0.05)
    assert (replay.done, replay.spent, dict(replay.failed)) == (0, 0.0, {})
    assert [(j.step, j.system, j.shard, j.last_progress) for j in st.running] == [
        ("simulate", "gpt/zero_shot", "001", "progress simulate gpt/zero_shot x: 1/3")
    ]
    text = render(st)
    assert (
        f"params.yaml: 6 test cases in 2 shards; Snakemake running (lock held, PID {holder.pid}), "
        "1 job(s) running"
    ) in text
    assert "running:\n  simulate gpt/zero_shot shard 001" in text
    assert "rate_limit 1" in text and "parse_error 1" in text
    assert "total: 3/12 dialogues, spent 1.1300 of forecast 12.0000 (9.4%)" in text
    assert "  simulate gpt/zero_shot shard 001: progress simulate gpt/zero_shot x: 1/3" in text

    # the command: forecasts from `lecode forecast`, twice with --watch
    from lecode.status import system_forecasts

    fc = system_forecasts(Settings.load(*params))
    assert fc[("gpt", "zero_shot")] > 0 and fc[("replay", "baseline")] > 0  # client calls
    assert main(["status", "--params", "params.yaml", "--watch", "0.01", "--times", "2"]) == 0
    shown = capsys.readouterr().out
    assert shown.count("total: 3/12 dialogues") == 2
    assert f"of forecast {sum(fc.values()):.4f}" in shown


def test_status_reader_reads_only_what_a_journal_appended(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(dumps(_t("a", "advice", 1.0)) + "\n" + dumps(_t("b", "advice", 1.0))[:20])
    reader = Reader()
    assert list(reader.journal(str(path))) == ["a"]
    with open(path, "a", encoding="utf-8") as fh:  # the rest of b's line, then c
        fh.write(dumps(_t("b", "advice", 1.0))[20:] + "\n" + dumps(_t("c", "advice", 1.0)) + "\n")
    assert sorted(reader.journal(str(path))) == ["a", "b", "c"]
    assert json.loads(path.read_text().splitlines()[1])["case_id"] == "b"


def test_status_tells_a_stale_lock_from_a_live_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snakemake's lock files and an incomplete marker, as a run killed with kill -9 leaves
    them: while a Snakemake process works in the directory the run is live; once it is gone the
    lock is stale, the job is not reported as running, and status says to unlock."""
    monkeypatch.chdir(tmp_path)
    params = _project(tmp_path)
    plan = Plan(Settings.load(*params))
    out = plan.evaluation.transcript("gpt", "zero_shot", "001")
    marker = Path(".snakemake/incomplete") / base64.urlsafe_b64encode(out.encode()).decode()
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    Path(".snakemake/locks").mkdir()
    Path(".snakemake/locks/0.input.lock").write_text("results/shards/x\n")
    Path(".snakemake/locks/0.output.lock").write_text(out + "\n")
    forecasts = {("gpt", "zero_shot"): 1.0, ("replay", "baseline"): 0.0}

    holder = _snakemake_standin(tmp_path)
    try:
        live = collect(params, forecasts=forecasts)
        assert live.holders == [holder.pid] and not live.lock_stale
    finally:
        holder.kill()  # as kill -9 leaves a run
        holder.wait()
    st = collect(params, forecasts=forecasts)
    assert (st.locked, st.holders, st.lock_stale) == (True, [], True)
    text = render(st)
    assert "running (lock held" not in text and "1 job(s) running" not in text
    assert "Snakemake not running (1 job(s) left incomplete), but a stale lock remains" in text
    assert "run `snakemake --unlock`" in text
    assert "incomplete (interrupted run):\n  simulate gpt/zero_shot shard 001" in text
