"""Snakemake script: one client model x strategy of the reliability study (see
lecode.steps.reliability)."""

from lecode.specs import ReliabilitySpec
from lecode.steps.logs import setup_logging
from lecode.steps.reliability import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReliabilitySpec.from_json(sm.params.spec), items=sm.input.sample, out=sm.output[0])
