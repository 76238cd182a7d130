"""Snakemake script: the figures and their data (see lecode.steps.figures)."""

from lecode.manifest import write_manifest
from lecode.specs import FiguresSpec
from lecode.steps.figures import run
from lecode.steps.logs import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(FiguresSpec.from_json(sm.params.spec), figures=sm.output.figures, plots=sm.output.plots)
write_manifest([sm.output.figures, sm.output.plots], sm.output.manifest)
