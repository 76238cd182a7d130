"""Snakemake script: the reviewed dataset, its split and statistics."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import AssembleSpec
from lecode.corpus.steps.corpus_assemble import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_assemble"):
    run(
        AssembleSpec.from_json(sm.params.spec),
        stage1=list(sm.input.stage1),
        stage2=list(sm.input.stage2),
        roles=list(sm.input.roles),
        out_dir=str(sm.output[0]),
    )
