"""The consultation loop, and the journal that makes finished dialogues survive any crash.

One dialogue: the client's initial query, then expert questions each answered by the client,
until the expert advises or ``max_turns`` questions were asked (then advice is forced).
Every dialogue ends with a ``stop_reason``:

- ``advice``: the expert chose to advise;
- ``max_turns``: advice was forced after ``max_turns`` questions;
- ``abstain``: the expert ended without advice;
- ``parse_error``: a role's reply stayed malformed after re-asking;
- ``error``: an infrastructure failure (API errors after retries); retried on the next run.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from pydantic import ValidationError

from lecode.agents.base import Client, Expert, RoleError, UsageMeter
from lecode.llm.errors import LLMCallError
from lecode.progress import Progress, failure_kind
from lecode.recordio import dumps
from lecode.records import Case, StopReason, Transcript, Turn

log = logging.getLogger(__name__)


async def simulate_case(
    case: Case,
    expert: Expert,
    client: Client,
    *,
    strategy: str,
    max_turns: int,
    provenance: dict[str, str] | None = None,
) -> Transcript:
    """Run one simulated consultation and return its transcript (never raises for role errors)."""
    meter = UsageMeter()
    turns: list[Turn] = [Turn(speaker="client", kind="query", text=case.initial_query)]
    stop: StopReason
    error: str | None = None
    asked = 0
    dialogue = expert.start(case)
    answers = client.start(case)
    try:
        while True:
            must_advise = asked >= max_turns
            move = await dialogue.next_move(turns, must_advise=must_advise, meter=meter)
            if move.kind == "advice":
                turns.append(Turn(speaker="lawyer", kind="advice", text=move.text))
                stop = "max_turns" if must_advise else "advice"
                break
            if move.kind == "abstain":
                stop = "abstain"
                break
            if must_advise:
                raise RoleError(f"expert asked a question after {max_turns} questions")
            turns.append(Turn(speaker="lawyer", kind="question", text=move.text))
            asked += 1
            answer = await answers.answer(turns, move.text, meter=meter)
            turns.append(Turn(speaker="client", kind="answer", text=answer))
    except RoleError as exc:
        stop, error = exc.kind, str(exc)
    except LLMCallError as exc:
        stop, error = "error", str(exc)
    if error:
        log.warning("case %s: %s: %s", case.id, stop, error)
    return Transcript(
        case_id=case.id,
        expert=expert.name,
        strategy=strategy,
        client=client.name,
        turns=tuple(turns),
        stop_reason=stop,
        error=error,
        usage=dict(meter.by_role),
        provenance=provenance or {},
        served=dict(meter.served),
    )


_CASE_ID_AT_START = re.compile(rb'\{"case_id": ("(?:[^"\\]|\\.)*")')


def _case_id_of(line: bytes) -> str | None:
    """The case id a journal line starts with (``None`` when it does not start as ``dumps``
    writes a transcript: such a line is parsed in full)."""
    m = _CASE_ID_AT_START.match(line)
    if m is None:
        return None
    try:
        return str(json.loads(m.group(1)))
    except ValueError:
        return None


class DialogueJournal:
    """Append-only, fsynced JSONL of finished transcripts of one system configuration.

    Lives outside Snakemake's declared outputs, so a crashed or killed job loses nothing that
    finished. Safe for several shard jobs appending at once (one locked write per line; reading
    takes a shared lock, so it never sees half a line in flight). A line that is torn (a
    ``kill -9`` mid-write, at any byte), not UTF-8, not JSON or not a transcript is skipped on
    reading with a warning naming ``file:line``; the lines after it are still read. Before each
    append a torn last line is cut off (its bytes are kept in ``<journal>.torn``), so the next
    record starts on a fresh line; a last line that lacks only its newline is complete and kept.
    Transcripts that ended in ``error`` are never journaled, so the next run retries exactly
    those dialogues.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def torn_path(self) -> Path:
        """Where the bytes of torn last lines removed before an append are kept, for audit."""
        return self.path.with_name(self.path.name + ".torn")

    @staticmethod
    def _parse(line: bytes) -> tuple[Transcript | None, str]:
        """The transcript on ``line``, or ``None`` and why not."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"
        try:
            return Transcript.model_validate_json(text), ""
        except ValidationError as exc:
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                return None, "not JSON"
            return None, f"not a valid transcript ({exc.error_count()} errors)"

    def load(self, case_ids: Collection[str] | None = None) -> dict[str, Transcript]:
        """Finished transcripts by case id (a later line for a case wins); with ``case_ids``,
        only those cases: the other lines are recognised by the case id at their start
        (``dumps`` writes it first) and neither parsed nor kept, so a shard job's memory and
        time do not grow with the journal of its whole system (``benchmarks/scale.py``).
        Torn or invalid lines of other cases are then skipped without a warning."""
        wanted: list[tuple[int, bytes, bool]] = []  # (line number, line, is the last line)
        try:
            with open(self.path, "rb") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH)  # wait out an append in flight
                for lineno, raw in enumerate(fh, start=1):
                    line = raw[:-1] if raw.endswith(b"\n") else raw
                    if not line.strip():
                        continue
                    if case_ids is not None:
                        case_id = _case_id_of(line)
                        if case_id is not None and case_id not in case_ids:
                            continue
                    wanted.append((lineno, line, not raw.endswith(b"\n")))
        except FileNotFoundError:
            return {}
        done: dict[str, Transcript] = {}
        for lineno, line, last in wanted:
            t, why = self._parse(line)
            if t is None:
                if last:
                    why = f"torn last line, no newline; {why}"
                log.warning(
                    "%s:%d: skipping a torn or invalid journal line: %s", self.path, lineno, why
                )
                continue
            if case_ids is None or t.case_id in case_ids:
                done[t.case_id] = t
        return done

    def _repair_tail(self, fd: int) -> bytes:
        """Under the exclusive lock: make the next write start a fresh line. A torn last line
        is copied to :attr:`torn_path` and cut off; one that lacks only its newline gets it
        (returned, to be written with the record)."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return b""
        data = os.pread(fd, size, 0)
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        if self._parse(tail)[0] is not None:
            return b"\n"
        lineno = data.count(b"\n", 0, start) + 1
        with open(self.torn_path, "ab") as out:
            out.write(tail + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.ftruncate(fd, start)
        log.warning(
            "%s:%d: cut off a torn last line (%d bytes, kept in %s)",
            self.path,
            lineno,
            len(tail),
            self.torn_path,
        )
        return b""

    def append(self, transcript: Transcript) -> None:
        """Journal a finished transcript durably (``error`` transcripts are not journaled)."""
        if transcript.stop_reason == "error":
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (dumps(transcript) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(self._repair_tail(fd) + data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class TooManyErrors(RuntimeError):
    """More dialogues failed than ``simulation.fail_on_error`` allows."""


async def simulate_cases(
    cases: Sequence[Case],
    expert: Expert,
    client: Client,
    *,
    strategy: str,
    max_turns: int,
    journal: DialogueJournal,
    provenance: Callable[[], dict[str, str]] | None = None,
    fail_on_error: float | None = None,
    progress: Progress | None = None,
) -> list[Transcript]:
    """Simulate every case not already in the journal; returns transcripts in case order.

    Dialogues run concurrently; LLM roles throttle themselves per endpoint. ``provenance`` is
    asked after each dialogue, so it can report what the endpoint revealed while serving it
    (served model id, system fingerprint). ``progress`` (default: one that counts dialogues
    only) logs progress lines every 30 s or 5% (:mod:`lecode.progress`).
    """
    done = journal.load({c.id for c in cases})
    todo = [c for c in cases if c.id not in done]
    log.info(
        "%d cases: %d already in the journal, %d to simulate",
        len(cases),
        len(cases) - len(todo),
        len(todo),
    )
    if progress is None:
        progress = Progress(f"simulate {expert.name}/{strategy}")
    progress.start(len(cases), len(cases) - len(todo))

    async def one(case: Case) -> Transcript:
        t = await simulate_case(case, expert, client, strategy=strategy, max_turns=max_turns)
        if provenance is not None:
            t = t.model_copy(update={"provenance": provenance()})
        await asyncio.to_thread(journal.append, t)  # fsync off the event loop
        progress.advance(failure_kind(t.stop_reason, t.error))
        return t

    ticker = asyncio.ensure_future(progress.ticker())
    try:
        fresh = await asyncio.gather(*(one(c) for c in todo))
    finally:
        ticker.cancel()
    progress.finish()
    by_id = {**done, **{t.case_id: t for t in fresh}}
    out = [by_id[c.id] for c in cases]
    n_err = sum(t.stop_reason == "error" for t in out)
    if n_err:
        log.warning("%d of %d dialogues ended in error (retried on the next run)", n_err, len(out))
    if fail_on_error is not None and out and n_err / len(out) > fail_on_error:
        raise TooManyErrors(
            f"{n_err}/{len(out)} dialogues failed, above simulation.fail_on_error={fail_on_error}"
        )
    return out
