"""Every table (Markdown, CSV, LaTeX), the DVC metrics file, and each table's provenance."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode.specs import TablesSpec
from lecode.steps.report_inputs import ReportInputs

log = logging.getLogger("lecode")

METRICS_FILE = "metrics.json"


def run(spec: TablesSpec, *, out_dir: str) -> None:
    from lecode.provenance import write_provenance
    from lecode.report.outputs import ReportSettings, write_tables

    data = ReportInputs(spec)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    written = write_tables(
        data.scores,
        data.system_dicts(),
        data.n_expected,
        out_dir,
        train_cases=data.train,
        test_cases=data.test,
        paper_numbers=spec.paper.path,
        usage=data.usage(),
        settings=ReportSettings.from_params(spec.settings.model_dump(mode="json")),
        metrics_path=str(Path(out_dir) / METRICS_FILE),
    )
    log.info("wrote %s", sorted(written))
    provenance = write_provenance(out_dir, spec, data)
    log.info("wrote %s", [p.name for p in provenance])
