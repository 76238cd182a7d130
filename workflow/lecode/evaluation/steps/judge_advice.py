"""The judge's scores of the final advice of one shard's transcripts."""

from __future__ import annotations

import logging

from lecode import paths
from lecode.agents.base import Judge, RoleError, UsageMeter
from lecode.agents.judges import build_judge
from lecode.evaluation.shard_evaluation import evaluate_shard
from lecode.evaluation.specs import JudgeSpec
from lecode.llm.errors import LLMCallError
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import write_judgements
from lecode.records import Case, Judgement, Transcript

log = logging.getLogger(__name__)


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


def run(spec: JudgeSpec, *, shard: str, transcripts: str, out: str) -> None:
    records = evaluate_shard(
        spec, build_judge, judge_dialogue, shard=shard, transcripts=transcripts
    )
    write_judgements(out, records)


def _run_job(spec: JudgeSpec, job: JobFiles) -> None:
    run(spec, shard=job.input.shard, transcripts=job.input.transcripts, out=job.output[0])


STEP = Step(spec=JudgeSpec, run=_run_job, output=paths.JUDGEMENT)
