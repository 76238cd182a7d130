"""Training dialogues of one SFT variant, written to a folder (the `build_sft_data` step and
the GPU check; see :mod:`lecode.sft.build`)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lecode import paths
from lecode.agents.context import RoleContext, endpoint
from lecode.agents.matchers import build_matcher
from lecode.agents.roles import close_context, role_context
from lecode.dataset import load_cases
from lecode.plan.jobs import JobFiles, Step
from lecode.records import Case
from lecode.sft.build import direct_dialogues, keyfact_dialogues, write_variant
from lecode.sft.dialogues import expert_templates
from lecode.sft.questions import LLMWriter, QuestionWriter, TemplateWriter, writer_templates
from lecode.sft.specs import SFTDataSpec

log = logging.getLogger("lecode")


def build_writer(spec: SFTDataSpec, ctx: RoleContext) -> QuestionWriter:
    if spec.writer is None:
        return TemplateWriter(max_leak=spec.max_leak)
    cfg = spec.writer.entry
    return LLMWriter(spec.writer.name, endpoint(ctx, spec.writer.name, cfg), writer_templates())


def run(spec: SFTDataSpec, *, out_dir: str, cases: list[Case] | None = None) -> dict[str, Any]:
    cases = sorted(cases if cases is not None else load_cases(spec.train.path), key=lambda c: c.id)
    extra: dict[str, Any] = {"spec": spec.digest(), "train": spec.train.model_dump()}
    if spec.variant == "direct":
        dialogues, rejected = direct_dialogues(cases)
    else:
        assert spec.matcher is not None
        roles = [r for r in (spec.writer, spec.matcher) if r is not None]
        ctx = role_context(spec.runtime, roles, job=f"sft_data {spec.variant}")
        try:
            writer = build_writer(spec, ctx)
            matcher = build_matcher(spec.matcher.name, spec.matcher.entry, ctx)
            dialogues, rejected, usage = asyncio.run(
                keyfact_dialogues(cases, spec.variant, writer, matcher, max_leak=spec.max_leak)
            )
        finally:
            close_context(ctx)
        used = {d.case_id for d in dialogues}
        extra["facts_of_dialogues"] = sum(c.n_facts for c in cases if c.id in used)
        extra["writer"] = writer.name
        extra["matcher"] = spec.matcher.name
        extra["usage"] = {k: v.model_dump() for k, v in sorted(usage.items())}
    stats = write_variant(
        out_dir,
        variant=spec.variant,
        n_cases=len(cases),
        dialogues=dialogues,
        rejected=rejected,
        templates=expert_templates(),
        max_turns=spec.max_turns,
        extra=extra,
    )
    log.info(
        "sft %s: %d of %d cases, %d samples, %d rejected %s",
        spec.variant,
        stats["dialogues"],
        stats["cases"],
        stats["samples"],
        stats["rejected"],
        stats["rejected_by_kind"],
    )
    return stats


def _run_job(spec: SFTDataSpec, job: JobFiles) -> None:
    run(spec, out_dir=str(Path(job.output.data).parent))


STEP = Step(spec=SFTDataSpec, run=_run_job, output=paths.SFT_DATA)
