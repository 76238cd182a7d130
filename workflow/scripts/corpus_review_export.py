"""Snakemake script: the pre-annotation as review spreadsheets."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import ReviewExportSpec
from lecode.corpus.steps.corpus_review_export import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_review_export"):
    run(
        ReviewExportSpec.from_json(sm.params.spec),
        stage1=list(sm.input.stage1),
        stage2=list(sm.input.stage2),
        out_dir=str(sm.output[0]),
        roles=list(sm.input.roles),
    )
