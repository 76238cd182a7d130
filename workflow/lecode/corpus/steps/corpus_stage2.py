"""Pre-annotation step 'stage2' of one shard of transcripts (see :mod:`lecode.corpus.annotate`)."""

from __future__ import annotations

from lecode.corpus.annotate import run as run_step
from lecode.corpus.specs import AnnotateSpec


def run(spec: AnnotateSpec, *, previous: str | None, out: str) -> int:
    return run_step("stage2", spec, previous=previous, out=out)
