"""Several reviews of one dialogue become one record.

For each dialogue and stage: an adjudicator's review, where there is one, decides; else the
configured rule: ``priority`` takes the review of the first reviewer (``corpus.final``, then
``corpus.reviewers`` order) who reviewed it, ``majority`` takes that review and replaces each
field on which most reviewers gave another value (intent and speaker of aligned utterances;
query, summary, case and charge types; importance of matched facts). A dialogue nobody reviewed
keeps its pre-annotation. :class:`Decision` records who decided and which fields were disputed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from lecode.corpus.annotations import Stage1Annotation, Stage2Annotation
from lecode.corpus.review import Review

T = TypeVar("T", Stage1Annotation, Stage2Annotation)


@dataclass
class Decision:
    """How one dialogue's stage was decided."""

    reviewers: list[str]
    decided_by: str
    how: str  # pre-annotation | single review | agreement | adjudication | priority | majority
    disputed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "reviewers": self.reviewers,
            "decided_by": self.decided_by,
            "how": self.how,
            "disputed": self.disputed,
        }


def _majority(values: Sequence[Hashable]) -> Hashable:
    """The most common value; ties go to the earliest (the priority order)."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in values if counts[v] == best)


def disputes1(records: Sequence[Stage1Annotation]) -> list[str]:
    """Fields of stage 1 on which the reviews differ (against the first)."""
    from lecode.corpus.agreement import align_utterances

    out: list[str] = []
    first = records[0]
    for other in records[1:]:
        pairs = align_utterances(first, other)
        if len(pairs) != len(first.dialogue) or len(pairs) != len(other.dialogue):
            out.append("dialogue.rows")
        for i, j in pairs:
            a, b = first.dialogue[i], other.dialogue[j]
            for name in ("speaker", "text", "intent"):
                if getattr(a, name) != getattr(b, name):
                    out.append(f"dialogue[{i}].{name}")
    return sorted(set(out), key=out.index)


def disputes2(records: Sequence[Stage2Annotation], threshold: float = 0.5) -> list[str]:
    from lecode.corpus.agreement import match_facts

    out: list[str] = []
    first = records[0]
    for other in records[1:]:
        for name in ("initial_query", "suggestion", "case_type", "charge_type"):
            if getattr(first, name) != getattr(other, name):
                out.append(name)
        pairs = match_facts(first.facts, other.facts, threshold)
        if len(pairs) != len(first.facts) or len(pairs) != len(other.facts):
            out.append("facts.rows")
        for i, j in pairs:
            if first.facts[i].text != other.facts[j].text:
                out.append(f"facts[{i}].text")
            if first.facts[i].importance != other.facts[j].importance:
                out.append(f"facts[{i}].importance")
    return sorted(set(out), key=out.index)


def majority1(records: Sequence[Stage1Annotation]) -> Stage1Annotation:
    from lecode.corpus.agreement import align_utterances

    base = records[0]
    votes: list[list[tuple[str, int]]] = [[(u.speaker, u.intent)] for u in base.dialogue]
    for other in records[1:]:
        for i, j in align_utterances(base, other):
            votes[i].append((other.dialogue[j].speaker, other.dialogue[j].intent))
    dialogue = []
    for u, v in zip(base.dialogue, votes, strict=True):
        # a vote is one reviewer's (speaker, intent): the winner is a valid pair
        won: tuple[str, int] = _majority(v)  # type: ignore[assignment]
        dialogue.append(u.model_copy(update={"speaker": won[0], "intent": won[1]}))
    return base.model_copy(update={"dialogue": tuple(dialogue)})


def majority2(records: Sequence[Stage2Annotation], threshold: float = 0.5) -> Stage2Annotation:
    from lecode.corpus.agreement import match_facts

    base = records[0]
    update: dict[str, object] = {
        name: _majority([getattr(r, name) for r in records])
        for name in ("initial_query", "suggestion", "case_type", "charge_type")
    }
    votes: list[list[int]] = [[f.importance] for f in base.facts]
    for other in records[1:]:
        for i, j in match_facts(base.facts, other.facts, threshold):
            votes[i].append(other.facts[j].importance)
    update["facts"] = tuple(
        f.model_copy(update={"importance": _majority(v)})
        for f, v in zip(base.facts, votes, strict=True)
    )
    return base.model_copy(update=update)


def _decide(
    did: str,
    pre: T,
    reviewed: list[tuple[str, T]],
    adjudicated: list[tuple[str, T]],
    rule: str,
    disputes: Callable[[Sequence[T]], list[str]],
    majority: Callable[[Sequence[T]], T],
) -> tuple[T, Decision]:
    names = [n for n, _ in reviewed]
    records = [r for _, r in reviewed]
    disputed = disputes(records) if len(records) > 1 else []
    if adjudicated:
        who, rec = adjudicated[0]
        return rec, Decision(names, who, "adjudication", disputed)
    if not reviewed:
        return pre, Decision([], pre.annotator, "pre-annotation")
    if len(reviewed) == 1:
        return records[0], Decision(names, names[0], "single review")
    if not disputed:
        return records[0], Decision(names, ",".join(names), "agreement")
    if rule == "majority":
        merged = majority(records)
        return merged.model_copy(update={"annotator": "+".join(names)}), Decision(
            names, "+".join(names), "majority", disputed
        )
    return records[0], Decision(names, names[0], "priority", disputed)


def resolve(
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
    reviews: Sequence[Review],
    adjudications: Sequence[Review] = (),
    rule: str = "priority",
) -> tuple[
    dict[str, Stage1Annotation], dict[str, Stage2Annotation], dict[str, dict[str, Decision]]
]:
    """The record of every dialogue and stage, and how each was decided. ``reviews`` in
    priority order."""
    s1: dict[str, Stage1Annotation] = {}
    s2: dict[str, Stage2Annotation] = {}
    decisions: dict[str, dict[str, Decision]] = {}
    for did in sorted(pre2):
        r1, d1 = _decide(
            did,
            pre1[did],
            [(r.reviewer, r.stage1[did]) for r in reviews if did in r.stage1],
            [(r.reviewer, r.stage1[did]) for r in adjudications if did in r.stage1],
            rule,
            disputes1,
            majority1,
        )
        r2, d2 = _decide(
            did,
            pre2[did],
            [(r.reviewer, r.stage2[did]) for r in reviews if did in r.stage2],
            [(r.reviewer, r.stage2[did]) for r in adjudications if did in r.stage2],
            rule,
            disputes2,
            majority2,
        )
        s1[did], s2[did] = r1, r2
        decisions[did] = {"stage1": d1, "stage2": d2}
    return s1, s2, decisions


DISAGREEMENTS_FILE = "disagreements.csv"


def disagreements_csv(decisions: dict[str, dict[str, Decision]]) -> str:
    """One row per disputed field: what an adjudicator has to decide (and who did)."""
    from lecode.corpus.roles_review import bom_csv

    rows: list[tuple[object, ...]] = [("id", "stage", "field", "reviewers", "decided_by", "how")]
    for did in sorted(decisions):
        for stage, d in decisions[did].items():
            for name in d.disputed:
                rows.append((did, stage, name, ";".join(d.reviewers), d.decided_by, d.how))
    return bom_csv(rows)
