"""The consultations, contexts and questions of the client-reliability study (Table 4)."""

from __future__ import annotations

import asyncio
import logging

from lecode import paths
from lecode.agents.roles import close_context, role_context
from lecode.dataset import load_cases
from lecode.plan.jobs import JobFiles, Step
from lecode.reliability import (
    WRITER_TEMPLATES,
    ContextQuestionWriter,
    build_role,
    lawyer_items,
    write_items,
    writer_items,
)
from lecode.reliability.specs import ReliabilitySampleSpec

log = logging.getLogger("lecode")


def run(spec: ReliabilitySampleSpec, *, out: str) -> None:
    cases = load_cases(spec.train.path)
    kw = {
        "n": spec.n_cases,
        "seed": spec.seed,
        "context_rounds": spec.context_rounds,
        "questions": spec.questions,
    }
    if spec.questions_file is not None:
        from lecode.reliability.hand import hand_items, read_hand_questions

        path = spec.questions_file.path
        items = hand_items(
            cases,
            read_hand_questions(path, spec.questions),
            context_rounds=spec.context_rounds,
            source=path,
        )
    elif spec.writer is None:
        items = lawyer_items(cases, **kw)
    else:
        ctx = role_context(spec.runtime, [spec.writer], job="reliability_sample")
        try:
            writer = build_role(
                ContextQuestionWriter,
                spec.writer.name,
                spec.writer.entry,
                ctx,
                WRITER_TEMPLATES,
            )
            items = asyncio.run(writer_items(cases, writer, **kw))
        finally:
            close_context(ctx)
    if not items:
        raise ValueError(
            f"{spec.train.path}: no training consultation has {spec.questions} clarifying "
            "questions to study (reliability.questions)"
        )
    log.info("reliability study: %d consultations, %d questions each", len(items), spec.questions)
    write_items(out, items)


def _run_job(spec: ReliabilitySampleSpec, job: JobFiles) -> None:
    run(spec, out=job.output[0])


STEP = Step(spec=ReliabilitySampleSpec, run=_run_job, output=paths.RELIABILITY_ITEMS)
