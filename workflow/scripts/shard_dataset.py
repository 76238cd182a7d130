"""Snakemake script: the test set -> shards (see lecode.evaluation.steps.shard_dataset)."""

from lecode.evaluation.steps.shard_dataset import run
from lecode.joblog import setup_logging
from lecode.specs import ShardSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ShardSpec.from_json(sm.params.spec), out_dir=str(sm.output.index).rsplit("/", 1)[0])
