"""The self-contained HTML report: the tables job's tables with each number's provenance (read
from their documents, nothing recomputed), the figures, and the transcript viewer."""

from __future__ import annotations

from lecode import paths
from lecode.plan.jobs import JobFiles, Step
from lecode.report.inputs import ReportInputs
from lecode.report.specs import HtmlSpec


def run(spec: HtmlSpec, *, figures: str, out: str) -> None:
    from lecode.report.html import write_html

    if spec.tables is None:
        raise ValueError("the HTML report's spec names no tables directory")
    data = ReportInputs(spec)
    write_html(
        out,
        tables_dir=spec.tables,
        scores=data.scores,
        systems=data.system_dicts(),
        train_cases=data.train,
        test_cases=data.test,
        transcripts=data.transcripts,
        matches=data.matches,
        judgements=data.judgements,
        figures_dir=figures,
    )


def _run_job(spec: HtmlSpec, job: JobFiles) -> None:
    run(spec, figures=job.input.figures, out=job.output[0])


STEP = Step(spec=HtmlSpec, run=_run_job, output=paths.HTML)
