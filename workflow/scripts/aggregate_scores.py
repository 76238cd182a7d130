"""Snakemake script: every system's scores in one file
(see lecode.evaluation.steps.aggregate_scores)."""

from lecode.evaluation.steps.aggregate_scores import run
from lecode.joblog import setup_logging
from lecode.specs import AggregateSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(AggregateSpec.from_json(sm.params.spec), out=sm.output[0])
