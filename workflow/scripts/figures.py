"""Snakemake script: the paper's figures (PNG, PDF) and the curve data for `dvc plots`."""

from lecode.jobs import build_figures, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
build_figures(sm.input, sm.params.systems, figures=sm.output.figures, plots=sm.output.plots)
