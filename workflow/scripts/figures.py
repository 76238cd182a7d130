"""Snakemake script: the figures and their data (see lecode.report.steps.figures)."""

from lecode.joblog import setup_logging
from lecode.manifest import write_manifest
from lecode.report.steps.figures import run
from lecode.specs import FiguresSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(FiguresSpec.from_json(sm.params.spec), figures=sm.output.figures, plots=sm.output.plots)
write_manifest([sm.output.figures, sm.output.plots], sm.output.manifest)
