"""Snakemake script: test dataset -> hash shards with manifests."""

from pathlib import Path

from lecode.jobs import make_shards, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
make_shards(sm.input[0], sm.params.n_shards, sm.params.limit, str(Path(sm.output.index).parent))
