"""Progress of a long job in its log, and the failure kinds that progress and status count.

A simulate, match or judge job logs one ``progress`` line every ``interval`` seconds (30) and
each time another ``step`` (5%) of its dialogues is done, whichever comes first, and a last one
when it ends::

    progress simulate m/zero_shot results/shards/…/003.jsonl: 120/1000 dialogues (12.0%),
    failed 3 (parse_error 1, rate_limit 2), calls 1234 (200 from the store), retries 5,
    tokens 345678, elapsed 1m40s, 1.20 dialogues/s, ETA 12m13s

Dialogues done counts those finished before this run (the journal) too; the rate and the
estimated time left use only the dialogues finished in this run: ``ETA = (total - done) /
((done - done_at_start) / elapsed)``. Calls, retries and tokens (prompt + completion) come
from the job's LLM ledger (store hits included, with their stored token counts), when the job
has LLM roles.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable

from lecode.records import RoleUsage

log = logging.getLogger("lecode.progress")

#: Every progress line starts with this word (``lecode status`` looks for it in job logs).
PREFIX = "progress"

# "model 'x' (expert/turn): rate_limit after 7 attempt(s): ..." (lecode.llm.endpoint)
_LLM_KIND = re.compile(r"\): ([a-z_]+) after \d+ attempt")


def failure_kind(stop_reason: str, error: str | None = None) -> str | None:
    """The failure kind of a finished unit of work, ``None`` when it did not fail.

    Dialogues: ``stop_reason`` ``advice``/``max_turns``/``abstain`` did not fail; ``parse_error``
    is its own kind; ``error`` is the LLM failure named in the error message (``rate_limit``,
    ``server``, ``timeout``, ``connection``, ``client_error``, ``malformed``, ``empty``), else
    ``error``. Matches and judgements: ``status`` ``ok`` did not fail; an ``error`` is the LLM
    failure named in the message, ``parse_error`` for a reply that stayed malformed, else
    ``error``.
    """
    if stop_reason in ("advice", "max_turns", "abstain", "ok"):
        return None
    if stop_reason == "parse_error":
        return "parse_error"
    m = _LLM_KIND.search(error or "")
    if m:
        return m.group(1)
    if error and "malformed reply" in error:
        return "parse_error"
    return "error"


def duration(seconds: float) -> str:
    """``1h02m03s``, ``4m05s``, ``6s`` (rounded down to whole seconds)."""
    s = int(max(0.0, seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def ledger_usage(runtime: object | None) -> Callable[[], RoleUsage] | None:
    """The running usage totals of a job's LLM runtime (all roles and models), or ``None``."""
    ledger = getattr(runtime, "ledger", None)
    if ledger is None:
        return None

    def usage() -> RoleUsage:
        total = RoleUsage()
        for u in ledger.totals().values():
            total = total + u
        return total

    return usage


class Progress:
    """Counts finished units (dialogues) of one job and logs progress lines."""

    def __init__(
        self,
        what: str,
        *,
        unit: str = "dialogues",
        usage: Callable[[], RoleUsage] | None = None,
        interval: float = 30.0,
        step: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger | None = None,
    ) -> None:
        self.what = what
        self.unit = unit
        self.usage = usage
        self.interval = interval
        self.step = step
        self.clock = clock
        self.logger = logger or log
        self.total = 0
        self.done = 0
        self.done_at_start = 0
        self.failed: Counter[str] = Counter()
        self.started = clock()
        self.last_logged = self.started
        self._next_mark = 1
        self.lines = 0  # progress lines logged

    def start(self, total: int, done: int = 0) -> None:
        """``total`` units in this job, ``done`` of them finished before it started."""
        self.total = total
        self.done = self.done_at_start = done
        self.started = self.last_logged = self.clock()
        self._next_mark = self._mark_after(done)
        self.log()

    def _mark_after(self, done: int) -> int:
        """The next count at which another ``step`` of the total is complete."""
        chunk = max(1, math.ceil(self.total * self.step))
        return (done // chunk + 1) * chunk

    def advance(self, failed: str | None = None) -> None:
        """One unit finished (``failed``: its failure kind, see :func:`failure_kind`)."""
        self.done += 1
        if failed:
            self.failed[failed] += 1
        if self.done >= self._next_mark:
            self._next_mark = self._mark_after(self.done)
            self.log()
        elif self.clock() - self.last_logged >= self.interval:
            self.log()

    def tick(self) -> None:
        """Log if nothing was logged for ``interval`` seconds (call it periodically)."""
        if self.clock() - self.last_logged >= self.interval:
            self.log()

    async def ticker(self) -> None:
        """Run beside the work: logs every ``interval`` seconds while nothing finishes."""
        while True:
            await asyncio.sleep(max(0.5, self.interval - (self.clock() - self.last_logged)))
            self.tick()

    def eta(self) -> float | None:
        """Seconds left at this run's rate so far; ``None`` before the first unit finishes."""
        ran = self.done - self.done_at_start
        elapsed = self.clock() - self.started
        if ran <= 0 or elapsed <= 0:
            return None
        return (self.total - self.done) / (ran / elapsed)

    def line(self) -> str:
        elapsed = self.clock() - self.started
        pct = 100.0 * self.done / self.total if self.total else 100.0
        parts = [f"{PREFIX} {self.what}: {self.done}/{self.total} {self.unit} ({pct:.1f}%)"]
        n_failed = sum(self.failed.values())
        if n_failed:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.failed.items()))
            parts.append(f"failed {n_failed} ({kinds})")
        else:
            parts.append("failed 0")
        if self.usage is not None:
            u = self.usage()
            parts.append(f"calls {u.calls} ({u.cached} from the store)")
            parts.append(f"retries {u.retries}")
            parts.append(f"tokens {u.prompt_tokens + u.completion_tokens}")
        parts.append(f"elapsed {duration(elapsed)}")
        ran = self.done - self.done_at_start
        if ran > 0 and elapsed > 0:
            parts.append(f"{ran / elapsed:.2f} {self.unit}/s")
        eta = self.eta()
        parts.append("ETA " + ("unknown" if eta is None else duration(eta)))
        return ", ".join(parts)

    def log(self) -> None:
        self.last_logged = self.clock()
        self.lines += 1
        self.logger.info("%s", self.line())

    def finish(self) -> None:
        """The last line (always logged)."""
        self.log()
