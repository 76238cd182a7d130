"""Snakemake script: one shard of consultations (see lecode.evaluation.steps.simulate)."""

from lecode.evaluation.steps.simulate import run
from lecode.joblog import setup_logging
from lecode.specs import SimulateSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SimulateSpec.from_json(sm.params.spec), shard=sm.input.shard, out=sm.output[0])
