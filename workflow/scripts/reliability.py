"""Snakemake script: one client model x strategy of the reliability study (see
lecode.reliability.steps.reliability)."""

from lecode.joblog import setup_logging
from lecode.reliability.steps.reliability import run
from lecode.specs import ReliabilitySpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReliabilitySpec.from_json(sm.params.spec), items=sm.input.sample, out=sm.output[0])
