"""Snakemake script: every table with its provenance (see lecode.steps.tables)."""

from lecode.specs import TablesSpec
from lecode.steps.logs import setup_logging
from lecode.steps.tables import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(TablesSpec.from_json(sm.params.spec), out_dir=sm.output[0])
