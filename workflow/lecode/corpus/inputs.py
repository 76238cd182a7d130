"""What the review, assembly and agreement steps read: the pre-annotation of every shard
and the reviewers' imported files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lecode.corpus.annotations import (
    M,
    RoleAnnotation,
    Stage1Annotation,
    Stage2Annotation,
    read_records,
)
from lecode.corpus.review import Review, import_review


class DuplicateDialogueError(ValueError):
    """Two shards (or two records of one) hold the same dialogue id."""


def _unique(files: Sequence[str], cls: type[M]) -> dict[str, M]:
    out: dict[str, M] = {}
    where: dict[str, str] = {}
    problems = []
    for f in files:
        for r in read_records(f, cls):
            rid = r.id  # type: ignore[attr-defined]
            if rid in out:
                problems.append(f"{f}: field 'id': dialogue {rid!r} also in {where[rid]}")
                continue
            out[rid], where[rid] = r, f
    if problems:
        raise DuplicateDialogueError(
            "duplicate dialogue ids (one would be dropped):\n  " + "\n  ".join(problems)
        )
    return out


def load_pre(
    stage1_files: Sequence[str], stage2_files: Sequence[str]
) -> tuple[dict[str, Stage1Annotation], dict[str, Stage2Annotation]]:
    """The pre-annotation by dialogue id; an id in two shards stops with both named."""
    return _unique(stage1_files, Stage1Annotation), _unique(stage2_files, Stage2Annotation)


def load_roles(files: Sequence[str]) -> dict[str, RoleAnnotation]:
    return _unique(files, RoleAnnotation)


def load_review(
    files: Sequence[str],
    reviewer: str,
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
) -> Review:
    """The files of ``reviewer`` among ``files`` (those under a directory of that name)."""
    mine = [f for f in files if Path(f).parent.name == reviewer]
    return import_review(mine, reviewer, pre1, pre2)
