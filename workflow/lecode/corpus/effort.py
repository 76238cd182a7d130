"""How much of a pre-annotation reviewers had to change, measured on the content of their
final records (independent of which pre-annotation their sheets were made from, so rule
changes can be compared on the same reviews).

Fields: stage 1, speaker, text and intent of each utterance (aligned by
:func:`lecode.corpus.alignment.align_texts`; an utterance on one side only counts its three
fields); stage 2, text and importance of each fact (matched by the fact matcher; a fact on one
side only counts two), the initial query, the summary, the case and charge types.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lecode.corpus.agreement import align_utterances, match_facts
from lecode.corpus.annotations import (
    ZH_SPEAKER,
    AnnotatedUtterance,
    KeyFact,
    Stage1Annotation,
    Stage2Annotation,
)

_INT = re.compile(r"^\s*\[?(\d+)")


@dataclass(frozen=True)
class Effort:
    fields: int
    changed: int

    @property
    def share(self) -> float:
        return self.changed / self.fields if self.fields else 0.0

    def __add__(self, other: Effort) -> Effort:
        return Effort(self.fields + other.fields, self.changed + other.changed)


def _sheet(path: Path) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8-sig"))))
    return [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in rows]


def sheet_stage1(path: Path, did: str, who: str) -> Stage1Annotation:
    utts = tuple(
        AnnotatedUtterance(
            speaker=ZH_SPEAKER[r["speaker"]],
            text=r["text"],
            intent=int(_INT.match(r["intent"]).group(1)),  # type: ignore[union-attr]
        )
        for r in _sheet(path)
    )
    return Stage1Annotation(id=did, annotator=who, dialogue=utts)


def sheet_stage2(path: Path, did: str, who: str) -> Stage2Annotation:
    rows = _sheet(path)
    value = {r["field"]: r["text"] for r in rows if r["field"] != "fact"}
    facts = tuple(
        KeyFact(text=r["text"], importance=int(r["importance"]))
        for r in rows
        if r["field"] == "fact"
    )

    def types(name: str) -> tuple[str, ...]:
        return tuple(t.strip() for t in value.get(name, "").split(";") if t.strip())

    return Stage2Annotation(
        id=did,
        annotator=who,
        initial_query=value["initial_query"],
        facts=facts,
        suggestion=value["suggestion"],
        case_type=types("case_type"),
        charge_type=types("charge_type"),
    )


def effort1(pre: Stage1Annotation, done: Stage1Annotation) -> Effort:
    pairs = align_utterances(pre, done)
    changed = 3 * (len(pre.dialogue) - len(pairs) + len(done.dialogue) - len(pairs))
    for i, j in pairs:
        a, b = pre.dialogue[i], done.dialogue[j]
        changed += sum(getattr(a, f) != getattr(b, f) for f in ("speaker", "text", "intent"))
    fields = 3 * (len(pairs) + (len(pre.dialogue) - len(pairs)) + (len(done.dialogue) - len(pairs)))
    return Effort(fields, changed)


def effort2(pre: Stage2Annotation, done: Stage2Annotation, threshold: float = 0.5) -> Effort:
    pairs = match_facts(pre.facts, done.facts, threshold)
    alone = len(pre.facts) + len(done.facts) - 2 * len(pairs)
    changed = 2 * alone
    for i, j in pairs:
        changed += (pre.facts[i].text != done.facts[j].text) + (
            pre.facts[i].importance != done.facts[j].importance
        )
    for name in ("initial_query", "suggestion", "case_type", "charge_type"):
        changed += getattr(pre, name) != getattr(done, name)
    return Effort(2 * (len(pairs) + alone) + 4, changed)


def review_effort(
    pre1: Mapping[str, Stage1Annotation],
    pre2: Mapping[str, Stage2Annotation],
    review_dir: str | Path,
) -> dict[str, Effort]:
    """``{"stage1": ..., "stage2": ...}`` over every sheet under ``review_dir/<reviewer>/``."""
    out = {"stage1": Effort(0, 0), "stage2": Effort(0, 0)}
    for path in sorted(Path(review_dir).glob("*/*.stage[12].csv")):
        did, stage = path.name.rsplit(".", 2)[0], path.name.rsplit(".", 2)[1]
        who = path.parent.name
        if stage == "stage1" and did in pre1:
            out[stage] += effort1(pre1[did], sheet_stage1(path, did, who))
        elif stage == "stage2" and did in pre2:
            out[stage] += effort2(pre2[did], sheet_stage2(path, did, who))
    return out
