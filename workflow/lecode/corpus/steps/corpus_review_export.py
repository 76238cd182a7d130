"""The pre-annotation as review spreadsheets, one CSV per dialogue and stage, with the
guidelines beside them (:mod:`lecode.corpus.review`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from lecode import paths
from lecode.corpus.annotations import (
    SPEAKER_ZH,
    RoleAnnotation,
    Stage1Annotation,
    read_records,
)
from lecode.corpus.assign import ASSIGNMENTS_FILE, assign, assignments_csv
from lecode.corpus.errors import reported
from lecode.corpus.inputs import load_pre
from lecode.corpus.labelstudio import write_tasks
from lecode.corpus.review import export_review
from lecode.corpus.roles_review import CHECK_FILE, roles_to_check
from lecode.corpus.specs import ReviewExportSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import atomic_write_text

log = logging.getLogger("lecode")

GUIDELINES = """# Reviewing the pre-annotation

Either in Label Studio (labelstudio/: one project per stage with stageN.config.xml as its
labelling configuration and stageN.tasks.json imported; the pre-annotation shows as
predictions to accept or correct; `lecode corpus ls-import` brings the JSON export back), or
in a spreadsheet as follows.

Copy the CSV files to <corpus.review_dir>/<your name>/ and edit them in a spreadsheet
program (keep them CSV, UTF-8). <id>.source.txt shows the raw transcript with the identified
roles and every standardisation edit, to check stage 1 against. The full guidelines are in
docs/building-a-dataset.md. Every sheet has a last column `comment` (备注): your note on the
row, kept with the review.

roles_to_check.csv lists the dialogues whose roles are doubtful (low confidence, the lawyer
opening, several clients) or whose last turn is a client's that reads like advice. Check them
before stage 1: copy the rows of a dialogue (id, speaker, role) into <corpus.review_dir>/
roles.csv with the right role (用户 or 律师); the next build annotates it with those roles.

<id>.stage1.csv (appendix E.1): one row per utterance, columns row, speaker, text, intent.
- speaker: 用户 or 律师; fix wrong roles, split a row holding two speakers (add a row with an
  empty `row`), merge consecutive rows of one speaker (delete one, join the text).
- text: convert jargon and euphemisms, fix typos and homophones; no greetings or farewells; the
  dialogue starts with the client's query and ends with the lawyer's advice.
- intent: 1 Client Initial Query, 2 Client Response, 3 Client Information Addition, 4 Client
  Need Extension, 5 Lawyer Clarifying Question, 6 Lawyer Information Verification, 7 Lawyer
  Legal Advice, 8 Lawyer Emotional Support, 9 Invalid Exchange, 10 Other (the number is enough).

<id>.stage2.csv (appendix E.2): columns field, row, text, importance.
- initial_query: the client's opening question.
- fact: one atomic key fact per row, in dialogue order, from the client's statements only
  (a lawyer's question with the client's short answer makes one fact); entities completed
  (用户, 用户丈夫...); importance 3 critical, 2 secondary, 1 non-critical. Add facts with an
  empty `row`; delete rows to remove facts; merge near-duplicates.
- suggestion: the lawyer's advice consolidated, in the lawyer's own key terms.
- case_type: types separated by ';'.
- charge_type: the charges of a criminal case, separated by ';' (empty otherwise).
"""


def source_text(roles: RoleAnnotation, s1: Stage1Annotation) -> str:
    """What the reviewer checks stage 1 against: the raw turns with their identified roles,
    and every standardisation edit the pre-annotation made."""
    assigned = "，".join(f"{k}={SPEAKER_ZH[v]}" for k, v in roles.roles.items())
    lines = [f"# 原始转写 {roles.id}（角色识别：{assigned}；标注：{roles.annotator}）", ""]
    lines += [
        f"[{k}] {label}（{SPEAKER_ZH[role]}）：{text}"
        for k, (label, role, text) in enumerate(roles.turns)
    ]
    lines += ["", f"# 规范化修改（标注：{s1.annotator}）", ""]
    lines += [f"- {e}" for e in s1.edits] or ["- （无）"]
    return "\n".join(lines) + "\n"


def run(
    spec: ReviewExportSpec,
    *,
    stage1: Sequence[str],
    stage2: Sequence[str],
    out_dir: str,
    roles: Sequence[str] = (),
) -> int:
    pre1, pre2 = load_pre(stage1, stage2)
    written = export_review(
        [pre1[i] for i in sorted(pre1)], [pre2[i] for i in sorted(pre2)], out_dir
    )
    role_records = [r for f in roles for r in read_records(f, RoleAnnotation)]
    for r in role_records:
        if r.id in pre1:
            path = Path(out_dir) / f"{r.id}.source.txt"
            atomic_write_text(path, source_text(r, pre1[r.id]))
            written.append(path)
    check = Path(out_dir) / CHECK_FILE
    atomic_write_text(check, roles_to_check(sorted(role_records, key=lambda r: r.id)))
    written.append(check)
    written += write_tasks(
        [pre1[i] for i in sorted(pre1)],
        [pre2[i] for i in sorted(pre2)],
        Path(out_dir) / "labelstudio",
        spec.labelstudio_project,
    )
    if spec.assign.stage1 or spec.assign.stage2:
        path = Path(out_dir) / ASSIGNMENTS_FILE
        atomic_write_text(path, assignments_csv(assign(list(pre2), spec.assign)))
        written.append(path)
    flagged = sorted((i, f) for i, s in pre1.items() for f in s.flags)
    for did, flag in flagged:
        log.warning("dialogue %s: to check: %s", did, flag)
    atomic_write_text(Path(out_dir) / "GUIDELINES.md", GUIDELINES)
    log.info("review export: %d file(s) for %d dialogue(s) in %s", len(written), len(pre2), out_dir)
    return len(written)


def _run_job(spec: ReviewExportSpec, job: JobFiles) -> None:
    run(
        spec,
        stage1=list(job.input.stage1),
        stage2=list(job.input.stage2),
        roles=list(job.input.roles),
        out_dir=str(job.output[0]),
    )


STEP = Step(spec=ReviewExportSpec, run=_run_job, output=paths.CORPUS_REVIEW, guard=reported)
