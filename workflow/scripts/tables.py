"""Snakemake script: every table with its provenance (see lecode.report.steps.tables)."""

from lecode.joblog import setup_logging
from lecode.manifest import write_manifest
from lecode.report.steps.tables import run
from lecode.specs import TablesSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(TablesSpec.from_json(sm.params.spec), out_dir=sm.output.tables)
write_manifest([sm.output.tables], sm.output.manifest)
