"""Every table as a document (each cell with its provenance), written as Markdown, CSV, LaTeX
and ``<table>.provenance.json`` from that one document, plus the DVC metrics file."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from lecode import paths
from lecode.evaluation.specs import SystemFiles
from lecode.manifest import write_manifest
from lecode.plan.jobs import JobFiles, Step
from lecode.report.inputs import ReportInputs
from lecode.report.specs import TablesSpec

log = logging.getLogger("lecode")

METRICS_FILE = "metrics.json"
#: Every client answer the fidelity audit flagged, one JSON object per line.
AUDIT_FILE = "client_audit.jsonl"


def not_run_note(systems: Sequence[SystemFiles]) -> str:
    """Table 3's note on the rows this configuration does not run (each once, with why)."""
    reasons: dict[str, list[str]] = {}
    for x in systems:
        reasons.setdefault(x.not_run or "", []).append(x.system.label)
    parts = [f"{', '.join(labels)} ({why})" for why, labels in reasons.items()]
    return "not run in this configuration, 0/N in every cell: " + "; ".join(parts)


def run(spec: TablesSpec, *, out_dir: str) -> dict[str, list[Path]]:
    from lecode.audit import audit_all, audit_frame, flagged_answers
    from lecode.recordio import atomic_write_text
    from lecode.report.outputs import TableOptions, write_tables
    from lecode.report.provenance import table_provenance

    data = ReportInputs(spec)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    audits = audit_all(data.test, data.transcripts, data.matches)
    written = write_tables(
        data.scores,
        data.system_dicts(),
        data.n_expected,
        out_dir,
        train_cases=data.train,
        test_cases=data.test,
        paper_numbers=spec.paper.path,
        usage=data.usage(),
        settings=TableOptions.from_settings(spec.settings),
        metrics_path=str(Path(out_dir) / METRICS_FILE),
        provenance=table_provenance(spec, data),
        audit=audit_frame(audits),
    )
    audit_path = Path(out_dir) / AUDIT_FILE
    atomic_write_text(
        audit_path,
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in flagged_answers(audits)),
    )
    written["client_audit"] = [audit_path]
    not_run = [x for x in spec.systems if x.not_run is not None]
    if not_run:  # rows this configuration does not run: 0/N cells, and the note says why
        from lecode.report.document import load, write_document

        doc = load(out_dir, "table3")
        doc = doc.model_copy(update={"notes": (*doc.notes, not_run_note(not_run))})
        written["table3"] = write_document(
            doc, out_dir, latex_ci=spec.settings.latex_ci, top=spec.settings.top_marked
        )
    for extra in spec.extra_tables:  # tables other jobs built (Table 4), published with these
        for src in sorted(Path(extra).iterdir()):
            if src.is_file():
                dest = Path(out_dir) / src.name
                atomic_write_text(dest, src.read_text(encoding="utf-8"))
                written.setdefault("extra", []).append(dest)
    noise_file = next(
        (Path(d) / "noise.json" for d in spec.extra_tables if (Path(d) / "noise.json").is_file()),
        None,
    )
    if noise_file is not None:  # Table 3's neighbouring rows against the measured noise
        from lecode.report.document import load, write_document
        from lecode.report.noise import adjacent_document

        noise = json.loads(noise_file.read_text(encoding="utf-8"))
        doc = adjacent_document(
            load(out_dir, "table3"), noise, threshold=spec.settings.coverage_threshold
        )
        written["adjacent"] = write_document(doc, out_dir, latex_ci=spec.settings.latex_ci)
    log.info("wrote %s", sorted(p.name for ps in written.values() for p in ps))
    return written


def _run_job(spec: TablesSpec, job: JobFiles) -> None:
    run(spec, out_dir=job.output.tables)
    write_manifest([job.output.tables], job.output.manifest)


STEP = Step(spec=TablesSpec, run=_run_job, output=paths.TABLES)
