"""Snakemake script: stage-2 pre-annotation (query, key facts, advice summary) of one shard."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import Stage2Spec
from lecode.corpus.steps.corpus_stage2 import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_stage2"):
    run(Stage2Spec.from_json(sm.params.spec), previous=str(sm.input[0]), out=str(sm.output[0]))
