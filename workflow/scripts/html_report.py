"""Snakemake script: the HTML report (see lecode.steps.html_report)."""

from lecode.specs import HtmlSpec
from lecode.steps.html_report import run
from lecode.steps.logs import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(HtmlSpec.from_json(sm.params.spec), figures=sm.input.figures, out=sm.output[0])
