"""Shared set-up of the benchmarks: synthetic cases, the mock endpoint in a child process, and
the consultation loop of the library with LLM roles built through the role builders."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecode.agents.clients import build_client
from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.dataset import load_cases
from lecode.evaluation.consultations import DialogueJournal, simulate_cases
from lecode.llm.runtime import LLMRuntime
from lecode.mock import MockControl, spawn_mock
from lecode.records import Case, Transcript

# The test-support package (tests/support) lives beside benchmarks/, outside the lecode package;
# a script run as ``python benchmarks/x.py`` has only benchmarks/ on its path.
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.cases import synthetic_cases, write_jsonl  # noqa: E402
from tests.support.mock_llm import FAST_RETRY, KEY_ENV, model_cfg  # noqa: E402

STRATEGIES = ("zero_shot", "mediq")
BENCH_KEY = "sk-bench-0123456789abcdef"


@dataclass
class MockEndpoint:
    """The mock endpoint in a child process (so it does not share this process's GIL)."""

    proc: subprocess.Popen[str]
    url: str
    control: MockControl
    cases: list[Case]
    workdir: Path

    def cpu_seconds(self) -> float:
        """CPU time the endpoint process has used so far (Linux ``/proc``; 0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def mock_endpoint(n_cases: int, *, latency: float) -> Iterator[MockEndpoint]:
    os.environ[KEY_ENV] = BENCH_KEY
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        workdir = Path(tmp)
        path = write_jsonl(workdir / "cases.jsonl", synthetic_cases(n_cases))
        proc, url = spawn_mock([path], latency=latency)
        try:
            yield MockEndpoint(proc, url, MockControl(url), load_cases(path), workdir)
        finally:
            stop_process(proc)


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """Terminate a child (the mock server) and close its pipes."""
    proc.terminate()
    proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def new_runtime(store: Path, *, durable: bool = True, ledger: Path | None = None) -> LLMRuntime:
    return LLMRuntime.create(store, retry=FAST_RETRY, durable=durable, ledger_path=ledger)


class TimedJournal(DialogueJournal):
    """A journal that also notes when each dialogue finished (``time.time()``)."""

    def __init__(self, path: Path, finished: list[float]) -> None:
        super().__init__(path)
        self.finished = finished

    def append(self, transcript: Transcript) -> None:
        super().append(transcript)
        self.finished.append(time.time())


@dataclass
class Run:
    seconds: float
    cpu_seconds: float  # of this process (the harness), not of the endpoint
    transcripts: list[Transcript]
    network_calls: int
    role_calls: int
    started: float  # time.time() at the start
    finished: list[float]  # time.time() at the end of each dialogue


def simulate_experts(
    ep: MockEndpoint,
    rt: LLMRuntime,
    *,
    journal_dir: Path,
    concurrency: int,
    max_turns: int = 10,
    strategies: Sequence[str] = STRATEGIES,
    timeout: float = 30.0,
) -> Run:
    """Every case with every expert strategy, all at once in one event loop, sharing the
    endpoint's concurrency limit (as the experts of one job would). ``seconds`` covers the
    building of the roles and the consultations."""
    cfg = model_cfg(ep.url, concurrency=concurrency, timeout=timeout)
    started = time.perf_counter()
    wall_started = time.time()
    cpu_started = time.process_time()
    finished: list[float] = []
    rt.default_max_turns = max_turns  # the LLM experts' budget in this run
    ctx = RoleContext(runtime=rt)
    client = build_client("mock", cfg, "first_person_dialogue", ctx)
    experts = [build_expert("mock", cfg, s, ctx) for s in strategies]

    async def all_experts() -> list[list[Transcript]]:
        return list(
            await asyncio.gather(
                *(
                    simulate_cases(
                        ep.cases,
                        expert,
                        client,
                        strategy=strategy,
                        max_turns=max_turns,
                        journal=TimedJournal(journal_dir / f"{strategy}.jsonl", finished),
                    )
                    for expert, strategy in zip(experts, strategies, strict=True)
                )
            )
        )

    results = asyncio.run(all_experts())
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    transcripts = [t for ts in results for t in ts]
    role_calls = sum(u.calls for t in transcripts for u in t.usage.values())
    return Run(
        seconds, cpu_seconds, transcripts, rt.network_calls, role_calls, wall_started, finished
    )


def check_outcomes(transcripts: Sequence[Transcript]) -> None:
    bad = [t for t in transcripts if t.stop_reason not in ("advice", "max_turns")]
    if bad:
        raise SystemExit(f"{len(bad)} dialogues did not end in advice, e.g. {bad[0].error}")
