"""One client model x strategy of the reliability study: answers, audit, judgements."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from lecode import paths
from lecode.agents.base import Client, ClientDialogue, RoleError, UsageMeter
from lecode.agents.clients import build_client
from lecode.agents.roles import close_context, role_context
from lecode.audit import audit_answer, known_answer
from lecode.llm.errors import LLMCallError
from lecode.plan.jobs import JobFiles, Step
from lecode.records import Turn
from lecode.reliability import (
    JUDGE_TEMPLATES,
    ReliabilityAnswer,
    ReliabilityItem,
    ReliabilityJudge,
    build_role,
    read_items,
    write_answers,
)
from lecode.reliability.specs import ReliabilitySpec

log = logging.getLogger("lecode")


async def answer_items(
    items: Sequence[ReliabilityItem],
    client: Client,
    *,
    strategy: str,
    judge: ReliabilityJudge | None = None,
) -> list[ReliabilityAnswer]:
    """Every question of every item answered (each on its own, after the item's context, in one
    client dialogue per item), audited and, with a judge, judged; in item then question order."""

    async def one(
        item: ReliabilityItem, dialogue: ClientDialogue, k: int, question: str
    ) -> ReliabilityAnswer:
        meter = UsageMeter()
        case = item.case
        history = [*item.context, Turn(speaker="lawyer", kind="question", text=question)]
        base: dict[str, Any] = {
            "case_id": case.id,
            "client": client.name,
            "strategy": strategy,
            "q": k,
            "question": question,
        }
        try:
            answer = await dialogue.answer(history, question, meter=meter)
        except (RoleError, LLMCallError) as exc:
            return ReliabilityAnswer(
                **base, status="error", error=str(exc), usage=dict(meter.by_role)
            )
        audit = audit_answer(
            case.facts, question, answer, position=k, answered_by=known_answer(case, question)
        ).as_json()
        verdict, j_status, j_error = None, "none", None
        if judge is not None:
            try:
                verdict = await judge.judge(case, item.context, question, answer, meter=meter)
                j_status = "ok"
            except (RoleError, LLMCallError) as exc:
                j_status, j_error = "error", str(exc)
        return ReliabilityAnswer(
            **base,
            answer=answer,
            audit=audit,
            judge=verdict,
            judge_status=j_status,
            judge_error=j_error,
            usage=dict(meter.by_role),
        )

    dialogues = [client.start(item.case) for item in items]
    jobs = [
        one(item, dialogue, k, q)
        for item, dialogue in zip(items, dialogues, strict=True)
        for k, q in enumerate(item.questions, start=1)
    ]
    return list(await asyncio.gather(*jobs))


def run(spec: ReliabilitySpec, *, items: str, out: str) -> None:
    sampled = read_items(items)
    roles = [r for r in (spec.client, spec.judge) if r is not None]
    name = f"{spec.client.name}/{spec.client_strategy}"
    ctx = role_context(spec.runtime, roles, job=f"reliability {name}")
    try:
        client = build_client(
            spec.client.name,
            spec.client.entry,
            spec.client_strategy,
            ctx,
        )
        judge = (
            build_role(
                ReliabilityJudge,
                spec.judge.name,
                spec.judge.entry,
                ctx,
                JUDGE_TEMPLATES,
            )
            if spec.judge is not None
            else None
        )
        answers = asyncio.run(
            answer_items(sampled, client, strategy=spec.client_strategy, judge=judge)
        )
    finally:
        close_context(ctx)
    failed = sum(a.status != "ok" for a in answers)
    unjudged = sum(a.judge_status == "error" for a in answers)
    log.info(
        "%s: %d answers, %d failed, %d without a judgement", name, len(answers), failed, unjudged
    )
    write_answers(out, answers)


def _run_job(spec: ReliabilitySpec, job: JobFiles) -> None:
    run(spec, items=job.input.sample, out=job.output[0])


STEP = Step(spec=ReliabilitySpec, run=_run_job, output=paths.RELIABILITY)
