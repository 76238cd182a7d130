"""Who reviews which dialogue (``corpus.assign``), and how far each annotator has got.

Each dialogue and stage goes to the annotator that ranks first by a seeded hash of (stage,
dialogue id, annotator) (rendezvous hashing: a dialogue keeps its annotator when transcripts
are added, and loads stay even); a seeded share ``overlap`` of the dialogues also goes to the
second-ranked annotator, for the agreement table. Progress counts, per annotator and stage, the
assigned dialogues whose reviewed file is under ``<review_dir>/<annotator>/``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lecode.config.corpus import CorpusAssign
from lecode.corpus.roles_review import bom_csv

ASSIGNMENTS_FILE = "assignments.csv"
PROGRESS_FILE = "progress.csv"
STAGES = ("stage1", "stage2")


def _unit(*parts: object) -> float:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Assignment:
    id: str
    stage: str
    annotator: str
    overlap: bool  # one of two annotators of the dialogue (for agreement)


def assign(ids: Iterable[str], settings: CorpusAssign) -> list[Assignment]:
    out: list[Assignment] = []
    for stage in STAGES:
        people: Sequence[str] = getattr(settings, stage)
        if not people:
            continue
        for did in sorted(set(ids)):
            ranked = sorted(people, key=lambda a: (_unit(settings.seed, stage, did, a), a))
            double = len(ranked) > 1 and _unit(settings.seed, stage, did) < settings.overlap
            for a in ranked[: 2 if double else 1]:
                out.append(Assignment(did, stage, a, double))
    return out


def assignments_csv(rows: Sequence[Assignment]) -> str:
    return bom_csv(
        [("id", "stage", "annotator", "overlap")]
        + [(a.id, a.stage, a.annotator, "yes" if a.overlap else "") for a in rows]
    )


@dataclass(frozen=True)
class AssignmentProgress:
    annotator: str
    stage: str
    assigned: int
    reviewed: int
    pending: int
    unassigned_reviewed: int  # files of dialogues not assigned to this annotator


def progress(rows: Sequence[Assignment], review_dir: str | Path) -> list[AssignmentProgress]:
    out = []
    people = sorted({(a.annotator, a.stage) for a in rows}, key=lambda x: (x[1], x[0]))
    for who, stage in people:
        mine = {a.id for a in rows if a.annotator == who and a.stage == stage}
        d = Path(review_dir) / who
        done = {p.name.removesuffix(f".{stage}.csv") for p in d.glob(f"*.{stage}.csv")}
        out.append(
            AssignmentProgress(
                who, stage, len(mine), len(mine & done), len(mine - done), len(done - mine)
            )
        )
    return out


def progress_csv(rows: Sequence[AssignmentProgress]) -> str:
    return bom_csv(
        [("annotator", "stage", "assigned", "reviewed", "pending", "unassigned_reviewed")]
        + [
            (p.annotator, p.stage, p.assigned, p.reviewed, p.pending, p.unassigned_reviewed)
            for p in rows
        ]
    )


def progress_table(rows: Sequence[AssignmentProgress]) -> str:
    lines = [
        "| annotator | stage | assigned | reviewed | pending | reviewed, not assigned |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {p.annotator} | {p.stage} | {p.assigned} | {p.reviewed} | {p.pending} | "
        f"{p.unassigned_reviewed} |"
        for p in rows
    ]
    return "\n".join(lines) + "\n"
