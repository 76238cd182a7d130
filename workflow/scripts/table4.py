"""Snakemake script: Table 4, client-simulator reliability (see lecode.reliability.steps.table4)."""

from lecode.joblog import setup_logging
from lecode.reliability.steps.table4 import run
from lecode.specs import Table4Spec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(Table4Spec.from_json(sm.params.spec), out_dir=sm.output[0])
