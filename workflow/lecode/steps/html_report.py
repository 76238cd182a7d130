"""The self-contained HTML report: tables with their provenance, figures, transcripts."""

from __future__ import annotations

from lecode.specs import HtmlSpec
from lecode.steps.report_inputs import ReportInputs


def run(spec: HtmlSpec, *, figures: str, out: str) -> None:
    from lecode.explain import html_summaries
    from lecode.report.html import write_html
    from lecode.report.outputs import ReportSettings

    data = ReportInputs(spec)
    write_html(
        out,
        provenance=html_summaries(spec.tables) if spec.tables else None,
        scores=data.scores,
        systems=data.system_dicts(),
        n_expected=data.n_expected,
        train_cases=data.train,
        test_cases=data.test,
        transcripts=data.transcripts,
        matches=data.matches,
        judgements=data.judgements,
        paper_numbers=spec.paper.path,
        usage=data.usage(),
        settings=ReportSettings.from_params(spec.settings.model_dump(mode="json")),
        figures_dir=figures,
    )
