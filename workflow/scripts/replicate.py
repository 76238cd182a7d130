"""Snakemake script: one replicate run of the noise study (see lecode.steps.replicate)."""

from lecode.specs import ReplicateSpec
from lecode.steps.logs import setup_logging
from lecode.steps.replicate import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ReplicateSpec.from_json(sm.params.spec), out_dir=sm.output[0])
