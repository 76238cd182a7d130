"""Reviewed annotations -> LeCoDe JSONL train/test files, split record, Table 2 statistics:
every reviewer's and adjudicator's files, decided per dialogue and stage
(:mod:`lecode.corpus.merge`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lecode import paths
from lecode.corpus.assemble import assemble
from lecode.corpus.errors import reported
from lecode.corpus.inputs import load_pre, load_review, load_roles
from lecode.corpus.merge import DISAGREEMENTS_FILE, disagreements_csv, resolve
from lecode.corpus.specs import AssembleSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import atomic_write_text

log = logging.getLogger("lecode")


def run(
    spec: AssembleSpec,
    *,
    stage1: Sequence[str],
    stage2: Sequence[str],
    out_dir: str,
    roles: Sequence[str] = (),
) -> dict[str, Any]:
    pre1, pre2 = load_pre(stage1, stage2)
    if roles:
        load_roles(roles)  # an id in two shards stops here too, with both named
    files = [f.path for f in spec.reviews]
    reviewers = spec.reviewers or ((spec.final,) if spec.final else ())
    reviews = [load_review(files, r, pre1, pre2) for r in reviewers]
    adjudications = [load_review(files, a, pre1, pre2) for a in spec.adjudicators]
    s1, s2, decisions = resolve(pre1, pre2, reviews, adjudications, spec.rule)
    reviewed1 = {i: r for i, r in s1.items() if decisions[i]["stage1"].how != "pre-annotation"}
    reviewed2 = {i: r for i, r in s2.items() if decisions[i]["stage2"].how != "pre-annotation"}
    flags = {i: list(pre1[i].flags) for i in sorted(pre1) if pre1[i].flags}
    for did, what in flags.items():
        log.warning("dialogue %s: to check: %s", did, "; ".join(what))
    record = assemble(
        pre1,
        pre2,
        reviewed1,
        reviewed2,
        test_fraction=spec.split.test_fraction,
        seed=spec.split.seed,
        out_dir=out_dir,
        decided_by={
            i: {stage: d.decided_by for stage, d in ds.items()} for i, ds in decisions.items()
        },
        extra={
            "spec": spec.digest(),
            "pre_annotation": spec.pre,
            "final_reviewer": spec.final,
            "reviewers": list(reviewers),
            "adjudicators": list(spec.adjudicators),
            "adjudication_rule": (
                f"{spec.rule}: where reviewers disagree and no adjudicator decided, "
                + (
                    "the first reviewer in priority order "
                    f"({', '.join(reviewers) or 'none'}) decides"
                    if spec.rule == "priority"
                    else "the value most reviewers gave decides (ties: priority order)"
                )
            ),
            "decisions": {
                i: {stage: d.as_dict() for stage, d in ds.items()}
                for i, ds in decisions.items()
                if any(d.how != "pre-annotation" for d in ds.values())
            },
            "flags": flags,
        },
    )
    atomic_write_text(Path(out_dir) / DISAGREEMENTS_FILE, disagreements_csv(decisions))
    log.info(
        "dataset: %d dialogue(s), %d train / %d test (seed %d); reviewed by %s: %d stage 1, "
        "%d stage 2",
        record["n_dialogues"],
        record["n_train"],
        record["n_test"],
        spec.split.seed,
        ", ".join(reviewers) or "nobody",
        len(reviewed1),
        len(reviewed2),
    )
    return record


def _run_job(spec: AssembleSpec, job: JobFiles) -> None:
    run(
        spec,
        stage1=list(job.input.stage1),
        stage2=list(job.input.stage2),
        roles=list(job.input.roles),
        out_dir=str(job.output[0]),
    )


STEP = Step(spec=AssembleSpec, run=_run_job, output=paths.CORPUS_DATASET, guard=reported)
