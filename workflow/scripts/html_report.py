"""Snakemake script: the HTML report (see lecode.report.steps.html_report)."""

from lecode.joblog import setup_logging
from lecode.report.steps.html_report import run
from lecode.specs import HtmlSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(HtmlSpec.from_json(sm.params.spec), figures=sm.input.figures, out=sm.output[0])
