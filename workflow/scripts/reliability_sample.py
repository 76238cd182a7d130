"""Snakemake script: the reliability study's sample (see lecode.steps.reliability_sample)."""

from lecode.specs import ReliabilitySampleSpec
from lecode.steps.logs import setup_logging
from lecode.steps.reliability_sample import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReliabilitySampleSpec.from_json(sm.params.spec), out=sm.output[0])
