"""Agreement between the reviewers, and between the pre-annotation and each review."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from lecode import paths
from lecode.corpus.agreement import Agreement, compare, group_agreement
from lecode.corpus.agreement_report import write_agreement
from lecode.corpus.errors import reported
from lecode.corpus.inputs import load_pre, load_review
from lecode.corpus.specs import AgreementSpec
from lecode.metrics.advice import RougeL
from lecode.plan.jobs import JobFiles, Step

log = logging.getLogger("lecode")


def run(
    spec: AgreementSpec, *, stage1: Sequence[str], stage2: Sequence[str], out_dir: str
) -> list[Path]:
    pre1, pre2 = load_pre(stage1, stage2)
    annotators = sorted({r.annotator for r in pre1.values()} | {r.annotator for r in pre2.values()})
    pre_name = f"pre-annotation ({', '.join(annotators)})"
    files = [f.path for f in spec.reviews]
    reviews = {r: load_review(files, r, pre1, pre2) for r in spec.reviewers}
    rouge = RougeL(punctuation=spec.rouge.punctuation == "keep")
    agreements: list[Agreement] = []
    for name, rv in reviews.items():
        agreements.append(
            compare(
                pre_name,
                name,
                pre1,
                rv.stage1,
                pre2,
                rv.stage2,
                rouge=rouge,
                threshold=spec.fact_threshold,
            )
        )
    for a, b in combinations(spec.reviewers, 2):
        ra, rb = reviews[a], reviews[b]
        agreements.append(
            compare(
                a,
                b,
                ra.stage1,
                rb.stage1,
                ra.stage2,
                rb.stage2,
                rouge=rouge,
                threshold=spec.fact_threshold,
            )
        )
    changes = [c for rv in reviews.values() for c in rv.changes]
    group = None
    if len(reviews) >= 2:
        group = group_agreement(
            list(reviews),
            pre1,
            pre2,
            [r.stage1 for r in reviews.values()],
            [r.stage2 for r in reviews.values()],
            spec.fact_threshold,
        )
        log.info(
            "agreement of %d reviewers: intent alpha %.3f, importance alpha %.3f",
            len(reviews),
            group.intent_alpha,
            group.importance_alpha,
        )
    written = write_agreement(agreements, changes, out_dir, spec_digest=spec.digest(), group=group)
    for ag in agreements:
        log.info(
            "agreement %s vs %s: intents %.3f (kappa %.3f), facts F1 %.3f",
            ag.first,
            ag.second,
            ag.intent_agreement,
            ag.intent_kappa,
            ag.fact_f1,
        )
    return written


def _run_job(spec: AgreementSpec, job: JobFiles) -> None:
    run(
        spec,
        stage1=list(job.input.stage1),
        stage2=list(job.input.stage2),
        out_dir=str(job.output[0]),
    )


STEP = Step(spec=AgreementSpec, run=_run_job, output=paths.CORPUS_AGREEMENT, guard=reported)
