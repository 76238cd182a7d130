"""Pre-annotation step 'stage2' of one shard of transcripts (see :mod:`lecode.corpus.annotate`)."""

from __future__ import annotations

from lecode import paths
from lecode.corpus.annotate import run as run_step
from lecode.corpus.errors import reported
from lecode.corpus.specs import AnnotateSpec, Stage2Spec
from lecode.plan.jobs import JobFiles, Step


def run(spec: AnnotateSpec, *, previous: str | None, out: str) -> int:
    return run_step("stage2", spec, previous=previous, out=out)


def _run_job(spec: Stage2Spec, job: JobFiles) -> None:
    run(spec, previous=str(job.input.previous), out=str(job.output[0]))


STEP = Step(spec=Stage2Spec, run=_run_job, output=paths.CORPUS_STAGE2, guard=reported)
