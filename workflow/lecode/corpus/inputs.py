"""What the review, assembly and agreement steps read: the pre-annotation of every shard
and the reviewers' imported files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lecode.corpus.annotations import Stage1Annotation, Stage2Annotation, read_records
from lecode.corpus.review import Review, import_review


def load_pre(
    stage1_files: Sequence[str], stage2_files: Sequence[str]
) -> tuple[dict[str, Stage1Annotation], dict[str, Stage2Annotation]]:
    s1 = {r.id: r for f in stage1_files for r in read_records(f, Stage1Annotation)}
    s2 = {r.id: r for f in stage2_files for r in read_records(f, Stage2Annotation)}
    return s1, s2


def load_review(
    files: Sequence[str],
    reviewer: str,
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
) -> Review:
    """The files of ``reviewer`` among ``files`` (those under a directory of that name)."""
    mine = [f for f in files if Path(f).parent.name == reviewer]
    return import_review(mine, reviewer, pre1, pre2)
