"""Snakemake script: the annotation agreement table."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import AgreementSpec
from lecode.corpus.steps.corpus_agreement import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_agreement"):
    run(
        AgreementSpec.from_json(sm.params.spec),
        stage1=list(sm.input.stage1),
        stage2=list(sm.input.stage2),
        out_dir=str(sm.output[0]),
    )
