"""Snakemake script: variance decomposition and minimum detectable differences (see
lecode.noise.steps.noise)."""

from lecode.joblog import setup_logging
from lecode.noise.steps.noise import run
from lecode.specs import NoiseSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(NoiseSpec.from_json(sm.params.spec), out_dir=sm.output[0], threads=sm.threads)
