"""Reviewed annotations -> LeCoDe JSONL train/test files, split record, Table 2 statistics."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lecode.corpus.assemble import assemble
from lecode.corpus.inputs import load_pre, load_review
from lecode.corpus.specs import AssembleSpec

log = logging.getLogger("lecode")


def run(
    spec: AssembleSpec, *, stage1: Sequence[str], stage2: Sequence[str], out_dir: str
) -> dict[str, Any]:
    pre1, pre2 = load_pre(stage1, stage2)
    reviewed1: dict[str, Any] = {}
    reviewed2: dict[str, Any] = {}
    if spec.final is not None:
        review = load_review([f.path for f in spec.reviews], spec.final, pre1, pre2)
        reviewed1, reviewed2 = review.stage1, review.stage2
    record = assemble(
        pre1,
        pre2,
        reviewed1,
        reviewed2,
        test_fraction=spec.split.test_fraction,
        seed=spec.split.seed,
        out_dir=out_dir,
        extra={"spec": spec.digest(), "pre_annotation": spec.pre, "final_reviewer": spec.final},
    )
    log.info(
        "dataset: %d dialogue(s), %d train / %d test (seed %d); reviewed by %s: %d stage 1, "
        "%d stage 2",
        record["n_dialogues"],
        record["n_train"],
        record["n_test"],
        spec.split.seed,
        spec.final,
        len(reviewed1),
        len(reviewed2),
    )
    return record
