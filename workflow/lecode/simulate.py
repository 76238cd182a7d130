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
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from lecode.agents.base import Client, Expert, RoleError, UsageMeter
from lecode.llm.errors import LLMCallError
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
    try:
        while True:
            must_advise = asked >= max_turns
            move = await expert.next_move(case, turns, must_advise=must_advise, meter=meter)
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
            answer = await client.answer(case, turns, move.text, meter=meter)
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
    )


class DialogueJournal:
    """Append-only, fsynced JSONL of finished transcripts of one system configuration.

    Lives outside Snakemake's declared outputs, so a crashed or killed job loses nothing that
    finished. Safe for several shard jobs appending at once (one locked write per line). A torn
    last line from a ``kill -9`` is ignored on reading. Transcripts that ended in ``error`` are
    never journaled, so the next run retries exactly those dialogues.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def load(self) -> dict[str, Transcript]:
        done: dict[str, Transcript] = {}
        if not self.path.exists():
            return done
        with open(self.path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    t = Transcript.model_validate_json(line)
                except ValidationError:
                    log.warning("%s:%d: skipping a torn or invalid journal line", self.path, lineno)
                    continue
                done[t.case_id] = t
        return done

    def append(self, transcript: Transcript) -> None:
        if transcript.stop_reason == "error":
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (dumps(transcript) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, data)
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
) -> list[Transcript]:
    """Simulate every case not already in the journal; returns transcripts in case order.

    Dialogues run concurrently; LLM roles throttle themselves per endpoint. ``provenance`` is
    asked after each dialogue, so it can report what the endpoint revealed while serving it
    (served model id, system fingerprint).
    """
    done = journal.load()
    todo = [c for c in cases if c.id not in done]
    log.info(
        "%d cases: %d already in the journal, %d to simulate",
        len(cases),
        len(cases) - len(todo),
        len(todo),
    )

    async def one(case: Case) -> Transcript:
        t = await simulate_case(case, expert, client, strategy=strategy, max_turns=max_turns)
        if provenance is not None:
            t = t.model_copy(update={"provenance": provenance()})
        await asyncio.to_thread(journal.append, t)  # fsync off the event loop
        return t

    fresh = await asyncio.gather(*(one(c) for c in todo))
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
