"""Evaluate one finished dialogue: which facts its questions elicited, and the judge's verdict.

A dialogue whose evaluation fails is recorded with ``status="error"`` and the reason, so it is
shown as missing (n/N) rather than scored zero.
"""

from __future__ import annotations

import logging

from lecode.agents.base import Judge, Matcher, RoleError, UsageMeter
from lecode.llm.errors import LLMCallError
from lecode.records import UNKNOWN_ANSWER, Case, Judgement, Matches, Transcript

log = logging.getLogger(__name__)


def _answered(answer: str) -> bool:
    return bool(answer.strip()) and answer.strip() != UNKNOWN_ANSWER


async def match_dialogue(matcher: Matcher, case: Case, t: Transcript) -> Matches:
    """Facts per question position; unanswered (不知道) pairs are not sent but keep their place."""
    meter = UsageMeter()

    def record(per_question: tuple[tuple[int, ...], ...], error: str | None) -> Matches:
        return Matches(
            case_id=case.id,
            expert=t.expert,
            strategy=t.strategy,
            matcher=matcher.name,
            n_facts=case.n_facts,
            per_question=per_question if error is None else (),
            status="ok" if error is None else "error",
            error=error,
            usage=dict(meter.by_role),
        )

    if t.stop_reason == "error":
        return record((), "the dialogue itself failed")
    pairs = t.qa_pairs()
    keep = [i for i, (_, answer) in enumerate(pairs) if _answered(answer)]
    per_q: list[tuple[int, ...]] = [() for _ in pairs]
    try:
        if keep:
            found = await matcher.match(case, [pairs[i] for i in keep], meter=meter)
            if len(found) != len(keep):
                raise RoleError(f"matcher returned {len(found)} lists for {len(keep)} pairs")
            for i, idx in zip(keep, found, strict=True):
                per_q[i] = tuple(sorted(set(idx)))
        return record(tuple(per_q), None)
    except (RoleError, LLMCallError, ValueError) as exc:
        log.warning("case %s: matching failed: %s", case.id, exc)
        return record((), str(exc))


async def judge_dialogue(judge: Judge, case: Case, t: Transcript) -> Judgement:
    """The judge's six scores of the dialogue's final advice, or why there are none."""
    meter = UsageMeter()

    def failed(error: str) -> Judgement:
        return Judgement(
            case_id=case.id,
            expert=t.expert,
            strategy=t.strategy,
            judge=judge.name,
            status="error",
            error=error,
            usage=dict(meter.by_role),
        )

    if t.advice is None:
        return failed(f"no advice (stop_reason={t.stop_reason})")
    try:
        scores = await judge.judge(case, t, meter=meter)
    except (RoleError, LLMCallError, ValueError) as exc:
        log.warning("case %s: judging failed: %s", case.id, exc)
        return failed(str(exc))
    return Judgement(
        case_id=case.id,
        expert=t.expert,
        strategy=t.strategy,
        judge=judge.name,
        scores=scores,
        usage=dict(meter.by_role),
    )
