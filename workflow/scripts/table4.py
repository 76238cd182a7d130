"""Snakemake script: Table 4, client-simulator reliability (see lecode.steps.table4)."""

from lecode.specs import Table4Spec
from lecode.steps.logs import setup_logging
from lecode.steps.table4 import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(Table4Spec.from_json(sm.params.spec), out_dir=sm.output[0])
