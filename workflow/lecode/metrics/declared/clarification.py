"""Clarification effectiveness: Recall, Weighted Recall, Recall@5, NDCG and NDCG-gold.

The computations are in :mod:`lecode.metrics.clarification`; every value is a fraction of the
case's facts (x100 on display). The examples are the worked example of
:func:`lecode.metrics.clarification.ndcg`: importance ``[3, 1, 2, 2]``, per question
``[[1], [], [0, 2]]``.
"""

from __future__ import annotations

import math

from lecode.metrics.clarification import (
    RECALL_K,
    ndcg,
    ndcg_gold,
    recall,
    recall_at_k,
    weighted_recall,
)
from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration

MISSING = "fact matching failed for this dialogue (or the case has no facts)"
CLARIFICATION_TAGS = ("table3", "table6", "radar", "summary")


def _recall(d: Dialogue) -> float:
    return recall(d.importance, d.matched)


def _weighted_recall(d: Dialogue) -> float:
    return weighted_recall(d.importance, d.matched)


def _recall_at_5(d: Dialogue) -> float:
    return recall_at_k(d.importance, d.matched, RECALL_K)


def _ndcg(d: Dialogue) -> float:
    return ndcg(d.importance, d.matched)


def _ndcg_gold(d: Dialogue) -> float:
    return ndcg_gold(d.importance, d.matched)


DECLARED: tuple[MetricDeclaration, ...] = (
    MetricDeclaration(
        key="recall",
        header="R",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=_recall,
        tags=CLARIFICATION_TAGS,
        missing=MISSING,
        order=10,
        description="facts elicited by any question / all facts",
        example=Example(expected=0.75, why="facts 1, 0, 2 of 4 elicited: 3/4"),
    ),
    MetricDeclaration(
        key="weighted_recall",
        header="WR",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=_weighted_recall,
        tags=CLARIFICATION_TAGS,
        missing=MISSING,
        order=20,
        description="importance of the elicited facts / importance of all facts",
        example=Example(expected=0.75, why="(1 + 3 + 2) / (3 + 1 + 2 + 2) = 6/8"),
    ),
    MetricDeclaration(
        key="recall_at_5",
        header="R@5",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=_recall_at_5,
        tags=CLARIFICATION_TAGS,
        missing=MISSING,
        order=30,
        description="facts elicited within the first five questions / all facts",
        example=Example(
            expected=0.5,
            why="importance [3,3,2,1,2,1], per question [[0],[0],[],[3],[5],[1,2]]: facts 0, 3 "
            "and 5 by question 5, 3/6",
            importance=(3, 3, 2, 1, 2, 1),
            per_question=((0,), (0,), (), (3,), (5,), (1, 2)),
        ),
    ),
    MetricDeclaration(
        key="ndcg",
        header="NDCG",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=_ndcg,
        tags=CLARIFICATION_TAGS,
        missing=MISSING,
        order=40,
        description="DCG of the per-question gains over the DCG of the same gains sorted",
        example=Example(
            expected=3.5 / (5 + 1 / math.log2(3)),
            why="gains [1,0,5]: DCG 1 + 5/log2(4) = 3.5; ideal [5,1,0]: IDCG 5 + 1/log2(3)",
        ),
    ),
    MetricDeclaration(
        key="ndcg_gold",
        header="NDCG-gold",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=_ndcg_gold,
        tags=("summary",),
        missing=MISSING,
        order=45,
        description="NDCG against every gold fact, at most 3 per question (missed facts count)",
        example=Example(
            expected=3.5 / (7 + 1 / math.log2(3)),
            why="DCG 3.5; ideal [3+2+2, 1]: IDCG 7 + 1/log2(3)",
        ),
    ),
)
