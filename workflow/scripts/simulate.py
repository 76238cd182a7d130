"""Snakemake script: one shard of consultations (see lecode.steps.simulate)."""

from lecode.specs import SimulateSpec
from lecode.steps.logs import setup_logging
from lecode.steps.simulate import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SimulateSpec.from_json(sm.params.spec), shard=sm.input.shard, out=sm.output[0])
