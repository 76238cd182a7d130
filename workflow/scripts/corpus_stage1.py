"""Snakemake script: stage-1 pre-annotation (standardisation, intents) of one shard."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import Stage1Spec
from lecode.corpus.steps.corpus_stage1 import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_stage1"):
    run(Stage1Spec.from_json(sm.params.spec), previous=str(sm.input[0]), out=str(sm.output[0]))
