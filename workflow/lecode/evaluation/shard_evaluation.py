"""Runs one evaluator (matcher or judge) over every transcript of one shard."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lecode.agents.roles import close_context, role_context
from lecode.evaluation.specs import EvaluateSpec
from lecode.progress import Progress, failure_kind, ledger_usage
from lecode.recordio import read_cases, read_transcripts
from lecode.records import Case, Judgement, Matches, Transcript

log = logging.getLogger("lecode")

E = TypeVar("E", Matches, Judgement)


def evaluate_shard(
    spec: EvaluateSpec,
    build: Callable[[str, Any, Any], Any],
    evaluate: Callable[[Any, Case, Transcript], Awaitable[E]],
    *,
    shard: str,
    transcripts: str,
) -> list[E]:
    cases = {c.id: c for c in read_cases(shard)}
    ctx = role_context(spec.runtime, [spec.role], job=f"{spec.step} {transcripts}")
    try:
        player = build(spec.role.name, spec.role.entry, ctx)

        progress = Progress(f"{spec.step} {transcripts}", usage=ledger_usage(ctx.runtime))

        async def one(t: Transcript) -> E:
            r = await evaluate(player, cases[t.case_id], t)
            progress.advance(failure_kind(r.status, r.error))
            return r

        async def all_() -> list[E]:
            ts = read_transcripts(transcripts)
            progress.start(len(ts))
            ticker = asyncio.ensure_future(progress.ticker())
            try:
                return list(await asyncio.gather(*(one(t) for t in ts)))
            finally:
                ticker.cancel()
                progress.finish()

        records = asyncio.run(all_())
    finally:
        close_context(ctx)
    n_bad = sum(r.status != "ok" for r in records)
    log.info("%s: %d dialogues, %d without a result", spec.step, len(records), n_bad)
    return records
