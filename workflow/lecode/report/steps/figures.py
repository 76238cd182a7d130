"""The paper's figures (PNG and PDF) and the data behind each curve (for ``dvc plots``)."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode import paths
from lecode.manifest import write_manifest
from lecode.plan.jobs import JobFiles, Step
from lecode.report.inputs import ReportInputs
from lecode.report.specs import FiguresSpec

log = logging.getLogger("lecode")


def _strategy_base(spec: FiguresSpec) -> str | None:
    """``report.strategy_base`` when that expert is in this run, else the figure's default."""
    base = spec.settings.strategy_base
    experts = {x.system.expert for x in spec.systems}
    return base if base in experts else None


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
        strategy_base=_strategy_base(spec),
    )
    log.info("wrote %s", sorted(written))


def _run_job(spec: FiguresSpec, job: JobFiles) -> None:
    run(spec, figures=job.output.figures, plots=job.output.plots)
    write_manifest([job.output.figures, job.output.plots], job.output.manifest)


STEP = Step(spec=FiguresSpec, run=_run_job, output=paths.FIGURES)
