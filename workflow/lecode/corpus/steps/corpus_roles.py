"""Pre-annotation step 'roles' of one shard of transcripts (see :mod:`lecode.corpus.annotate`)."""

from __future__ import annotations

from lecode import paths
from lecode.corpus.annotate import run as run_step
from lecode.corpus.errors import reported
from lecode.corpus.specs import AnnotateSpec, RolesSpec
from lecode.plan.jobs import JobFiles, Step


def run(spec: AnnotateSpec, *, previous: str | None, out: str) -> int:
    return run_step("roles", spec, previous=previous, out=out)


def _run_job(spec: RolesSpec, job: JobFiles) -> None:
    run(spec, previous=None, out=str(job.output[0]))


STEP = Step(spec=RolesSpec, run=_run_job, output=paths.CORPUS_ROLES, guard=reported)
