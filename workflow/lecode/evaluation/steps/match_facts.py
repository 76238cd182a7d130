"""Which key facts each clarifying question of one shard's transcripts elicited."""

from __future__ import annotations

import logging

from lecode import paths
from lecode.agents.base import Matcher, RoleError, UsageMeter
from lecode.agents.matchers import build_matcher
from lecode.evaluation.shard_evaluation import evaluate_shard
from lecode.evaluation.specs import MatchSpec
from lecode.llm.errors import LLMCallError
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import write_matches
from lecode.records import UNKNOWN_ANSWER, Case, Matches, Transcript

log = logging.getLogger(__name__)


def _answered(answer: str) -> bool:
    return bool(answer.strip()) and answer.strip() != UNKNOWN_ANSWER


async def match_dialogue(matcher: Matcher, case: Case, t: Transcript) -> Matches:
    """Facts per question position; unanswered (不知道) pairs are not sent but keep their place.

    A dialogue whose matching fails is recorded with ``status="error"`` and the reason, so it
    is shown as missing (n/N) rather than scored zero.
    """
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


def run(spec: MatchSpec, *, shard: str, transcripts: str, out: str) -> None:
    records = evaluate_shard(
        spec, build_matcher, match_dialogue, shard=shard, transcripts=transcripts
    )
    write_matches(out, records)


def _run_job(spec: MatchSpec, job: JobFiles) -> None:
    run(spec, shard=job.input.shard, transcripts=job.input.transcripts, out=job.output[0])


STEP = Step(spec=MatchSpec, run=_run_job, output=paths.MATCH)
