"""Snakemake script: the reliability study's sample
(see lecode.reliability.steps.reliability_sample)."""

from lecode.joblog import setup_logging
from lecode.reliability.steps.reliability_sample import run
from lecode.specs import ReliabilitySampleSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReliabilitySampleSpec.from_json(sm.params.spec), out=sm.output[0])
