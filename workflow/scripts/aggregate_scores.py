"""Snakemake script: every system's scores in one file (see lecode.steps.aggregate_scores)."""

from lecode.specs import AggregateSpec
from lecode.steps.aggregate_scores import run
from lecode.steps.logs import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(AggregateSpec.from_json(sm.params.spec), out=sm.output[0])
