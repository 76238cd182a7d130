"""Snakemake script: variance decomposition and minimum detectable differences (see
lecode.steps.noise)."""

from lecode.specs import NoiseSpec
from lecode.steps.logs import setup_logging
from lecode.steps.noise import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(NoiseSpec.from_json(sm.params.spec), out_dir=sm.output[0], threads=sm.threads)
