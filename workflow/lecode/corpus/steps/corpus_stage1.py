"""Pre-annotation step 'stage1' of one shard of transcripts (see :mod:`lecode.corpus.annotate`)."""

from __future__ import annotations

from lecode import paths
from lecode.corpus.annotate import run as run_step
from lecode.corpus.errors import reported
from lecode.corpus.specs import AnnotateSpec, Stage1Spec
from lecode.plan.jobs import JobFiles, Step


def run(spec: AnnotateSpec, *, previous: str | None, out: str) -> int:
    return run_step("stage1", spec, previous=previous, out=out)


def _run_job(spec: Stage1Spec, job: JobFiles) -> None:
    run(spec, previous=str(job.input.previous), out=str(job.output[0]))


STEP = Step(spec=Stage1Spec, run=_run_job, output=paths.CORPUS_STAGE1, guard=reported)
