"""One client model x strategy of the reliability study: answers, audit, judgements."""

from __future__ import annotations

import asyncio
import logging

from lecode.agents.clients import build_client
from lecode.reliability import (
    JUDGE_TEMPLATES,
    ReliabilityJudge,
    answer_items,
    build_role,
    read_items,
    write_answers,
)
from lecode.specs import ReliabilitySpec
from lecode.steps.roles import close_context, role_context

log = logging.getLogger("lecode")


def run(spec: ReliabilitySpec, *, items: str, out: str) -> None:
    sampled = read_items(items)
    roles = [r for r in (spec.client, spec.judge) if r is not None]
    name = f"{spec.client.name}/{spec.client_strategy}"
    ctx = role_context(spec.runtime, roles, job=f"reliability {name}")
    try:
        client = build_client(
            spec.client.name,
            spec.client.entry.model_dump(mode="json"),
            spec.client_strategy,
            ctx,
        )
        judge = (
            build_role(
                ReliabilityJudge,
                spec.judge.name,
                spec.judge.entry.model_dump(mode="json"),
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
