"""Table 4 (client-simulator reliability) from the study's answer files: Markdown, CSV,
LaTeX and its provenance document, under the job's own directory (the tables job copies them
into the published tables)."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode import paths
from lecode.plan.jobs import JobFiles, Step
from lecode.reliability.specs import Table4Spec
from lecode.specs import file_sha256

log = logging.getLogger("lecode")


def run(spec: Table4Spec, *, out_dir: str) -> list[Path]:
    from lecode.reliability import read_answers, read_items
    from lecode.reliability.table4 import run_info, table4, table4_document
    from lecode.report.document import write_document
    from lecode.report.outputs import TableOptions
    from lecode.report.paper import load_paper_numbers

    settings = TableOptions.from_settings(spec.settings)
    items = read_items(spec.items)
    case_ids = [i.case.id for i in items]
    answers = {(r.client, r.strategy): read_answers(r.file) for r in spec.runs}
    judged = "judge" in spec.roles
    offline = sorted({r.client for r in spec.runs if not spec.roles[f"client:{r.client}"].is_llm})
    runs = [r.model_dump() for r in spec.runs]
    table = table4(
        runs,
        answers,
        case_ids,
        plan=settings.plan(),
        judged=judged,
        paper=load_paper_numbers(spec.paper.path),
        offline=offline,
        sources=sorted({i.source for i in items}),
    )
    items_sha = file_sha256(spec.items)
    systems = {}
    for r in spec.runs:
        roles = {"client": spec.roles[f"client:{r.client}"]}
        if judged:
            roles["judge"] = spec.roles["judge"]
        if "writer" in spec.roles:
            roles["writer"] = spec.roles["writer"]
        systems[f"{r.client}/{r.strategy}"] = run_info(
            r.model_dump(),
            roles,
            {
                "spec": r.digest,
                "answers": r.file,
                "answers_sha256": file_sha256(r.file),
                "answers_records": str(len(answers[(r.client, r.strategy)])),
                "items": spec.items,
                "items_sha256": items_sha,
                "sample_spec": spec.sample,
            },
        )
    boot = {
        "resamples": settings.resamples,
        "seed": settings.seed,
        "confidence": settings.confidence,
    }
    doc = table4_document(
        table,
        spec_digest=spec.digest(),
        systems=systems,
        threshold=settings.coverage_threshold,
        bootstrap=boot,
    )
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    written = write_document(doc, out_dir, latex_ci=settings.latex_ci)
    log.info("wrote %s", sorted(p.name for p in written))
    return written


def _run_job(spec: Table4Spec, job: JobFiles) -> None:
    run(spec, out_dir=job.output[0])


STEP = Step(spec=Table4Spec, run=_run_job, output=paths.TABLE4)
