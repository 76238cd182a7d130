"""Snakemake script: the self-contained HTML report with the transcript viewer."""

from lecode.jobs import build_html, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
build_html(sm.input, sm.params.systems, sm.params.report, out=sm.output[0])
