"""The paper's figures (PNG and PDF) and the data behind each curve (for ``dvc plots``)."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode.specs import FiguresSpec
from lecode.steps.report_inputs import ReportInputs

log = logging.getLogger("lecode")


def run(spec: FiguresSpec, *, figures: str, plots: str) -> None:
    from lecode.report.figures import write_figures

    data = ReportInputs(spec)
    Path(figures).mkdir(parents=True, exist_ok=True)
    Path(plots).mkdir(parents=True, exist_ok=True)
    written = write_figures(
        Path(figures).parent,
        figures_dir=figures,
        plots_dir=plots,
        scores=data.scores,
        systems=data.system_dicts(),
        train_cases=data.train,
        test_cases=data.test,
        matches=data.matches or None,
    )
    log.info("wrote %s", sorted(written))
