"""Snakemake script: one replicate run of the noise study (see lecode.noise.steps.replicate)."""

from lecode.joblog import setup_logging
from lecode.noise.steps.replicate import run
from lecode.specs import ReplicateSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReplicateSpec.from_json(sm.params.spec), out_dir=sm.output[0])
