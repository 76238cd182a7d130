"""Snakemake script: every table (Markdown, CSV, LaTeX) and the DVC metrics file."""

from lecode.jobs import build_tables, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
build_tables(
    sm.input,
    sm.params.systems,
    sm.params.report,
    out_dir=sm.output.tables,
    metrics=sm.output.metrics,
    params=sm.config,
)
