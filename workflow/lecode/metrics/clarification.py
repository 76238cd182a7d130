"""Clarification metrics of one dialogue: recall, weighted recall, recall@k and NDCG.

Every function takes the same two inputs:

``importance``
    the importance of each gold fact (1 = non-critical, 2 = secondary, 3 = critical), indexed by
    fact number;
``per_question``
    for each clarifying question, in the order asked, the 0-based indices of the facts matched
    to it: ``per_question[p]`` belongs to question position ``p + 1``. A question that elicited
    nothing (for instance one answered ``不知道``) keeps its position with an empty list.

A fact counts once, at the first position where it is matched; later matches of the same fact
(and repeats inside one list) add nothing. All results are fractions in 0..1 except
:func:`ndcg_gold`, which can exceed 1 (see there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: The cut-off of Recall@k in the paper's tables.
RECALL_K = 5


def _check_importance(importance: Sequence[int]) -> None:
    if not importance:
        raise ValueError("a case without facts has no clarification metrics")
    for i, w in enumerate(importance):
        if w <= 0:
            raise ValueError(f"fact {i}: importance must be positive, got {w}")


def first_match_positions(
    importance: Sequence[int], per_question: Sequence[Sequence[int]]
) -> dict[int, int]:
    """Map each elicited fact index to the 1-based question position of its first match."""
    _check_importance(importance)
    n = len(importance)
    first: dict[int, int] = {}
    for p, facts in enumerate(per_question, start=1):
        for f in facts:
            if not 0 <= f < n:
                raise ValueError(f"question {p}: fact index {f} outside 0..{n - 1}")
            first.setdefault(f, p)
    return first


def position_gains(importance: Sequence[int], per_question: Sequence[Sequence[int]]) -> list[int]:
    """Gain per question position: the summed importance of the facts first matched there."""
    gains = [0] * len(per_question)
    for f, p in first_match_positions(importance, per_question).items():
        gains[p - 1] += importance[f]
    return gains


def _dcg(gains: Sequence[float]) -> float:
    """sum over 1-based positions p of gains[p-1] / log2(p + 1)."""
    return sum(g / math.log2(p + 1) for p, g in enumerate(gains, start=1))


def recall(importance: Sequence[int], per_question: Sequence[Sequence[int]]) -> float:
    """Facts elicited at any position / all facts."""
    return len(first_match_positions(importance, per_question)) / len(importance)


def weighted_recall(importance: Sequence[int], per_question: Sequence[Sequence[int]]) -> float:
    """Importance of the elicited facts / importance of all facts."""
    first = first_match_positions(importance, per_question)
    return sum(importance[f] for f in first) / sum(importance)


def recall_at_k(
    importance: Sequence[int], per_question: Sequence[Sequence[int]], k: int = RECALL_K
) -> float:
    """Facts elicited within the first ``k`` question positions / all facts.

    Positions are question positions, so a question that elicited nothing still uses one of
    the ``k``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    first = first_match_positions(importance, per_question)
    return sum(1 for p in first.values() if p <= k) / len(importance)


def ndcg(importance: Sequence[int], per_question: Sequence[Sequence[int]]) -> float:
    """NDCG as the LeCoDe paper computes it: how well the questions are ordered by importance.

    ``gain_p`` is the summed importance of the facts first matched at question position ``p``
    and ``DCG = sum_p gain_p / log2(p + 1)``. The ideal DCG takes the same per-position gains
    sorted in descending order and packed into positions 1, 2, ... So the ideal list holds only
    what was elicited: missed facts do not lower the score (that is what :func:`ndcg_gold`
    measures), and a question that elicits several facts keeps their summed gain at one position,
    which keeps the value within 0..1. No fact elicited gives 0.0.

    Worked example: importance ``[3, 1, 2, 2]``, ``per_question [[1], [], [0, 2]]``
    (question 2 elicited nothing; fact 3 is never elicited)::

        gains = [1, 0, 3 + 2] = [1, 0, 5]
        DCG   = 1/log2(2) + 0/log2(3) + 5/log2(4) = 1 + 0 + 2.5 = 3.5
        ideal = [5, 1, 0]
        IDCG  = 5/log2(2) + 1/log2(3) + 0/log2(4) = 5 + 0.630930 = 5.630930
        NDCG  = 3.5 / 5.630930 = 0.621567
    """
    gains = position_gains(importance, per_question)
    idcg = _dcg(sorted(gains, reverse=True))
    return _dcg(gains) / idcg if idcg > 0 else 0.0


#: The most facts a simulated client discloses in one reply (the protocol's limit).
FACTS_PER_REPLY = 3


def ndcg_gold(
    importance: Sequence[int],
    per_question: Sequence[Sequence[int]],
    facts_per_question: int = FACTS_PER_REPLY,
) -> float:
    """NDCG against the best consultation possible: missed facts lower the score.

    The DCG is the same as in :func:`ndcg`. The ideal packs every gold fact, most important
    first, into the first questions, at most ``c`` facts per question, where ``c`` is the larger
    of ``facts_per_question`` (the client's limit of 3 facts per reply) and the most facts any
    one question of this dialogue elicited. Sorted packing maximises the DCG under that
    capacity, so the ideal bounds the DCG and the score stays within 0..1.

    For the example of :func:`ndcg` (importance ``[3, 1, 2, 2]``, DCG 3.5): the ideal is
    ``[3+2+2, 1]`` -> ``IDCG = 7/log2(2) + 1/log2(3) = 7 + 0.630930 = 7.630930`` and
    ``NDCG_gold = 3.5 / 7.630930 = 0.458660``. No fact elicited gives 0.0.
    """
    first = first_match_positions(importance, per_question)
    gains = position_gains(importance, per_question)
    per_position: dict[int, int] = {}
    for p in first.values():
        per_position[p] = per_position.get(p, 0) + 1
    capacity = max([facts_per_question, *per_position.values()])
    ranked = sorted(importance, reverse=True)
    ideal = [sum(ranked[i : i + capacity]) for i in range(0, len(ranked), capacity)]
    return _dcg(gains) / _dcg(ideal)
