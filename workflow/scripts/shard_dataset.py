"""Snakemake script: the test set -> shards (see lecode.steps.shard_dataset)."""

from lecode.specs import ShardSpec
from lecode.steps.logs import setup_logging
from lecode.steps.shard_dataset import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(ShardSpec.from_json(sm.params.spec), out_dir=str(sm.output.index).rsplit("/", 1)[0])
