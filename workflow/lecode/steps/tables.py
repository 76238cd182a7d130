"""Every table as a document (each cell with its provenance), written as Markdown, CSV, LaTeX
and ``<table>.provenance.json`` from that one document, plus the DVC metrics file."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode.specs import TablesSpec
from lecode.steps.report_inputs import ReportInputs

log = logging.getLogger("lecode")

METRICS_FILE = "metrics.json"


def run(spec: TablesSpec, *, out_dir: str) -> dict[str, list[Path]]:
    from lecode.provenance import table_provenance
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
        settings=ReportSettings.from_settings(spec.settings),
        metrics_path=str(Path(out_dir) / METRICS_FILE),
        provenance=table_provenance(spec, data),
    )
    log.info("wrote %s", sorted(p.name for ps in written.values() for p in ps))
    return written
