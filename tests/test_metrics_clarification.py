"""Clarification metrics, with every expectation worked out by hand in the comments."""

from __future__ import annotations

import math

import pytest

from lecode.metrics.clarification import (
    first_match_positions,
    ndcg,
    ndcg_gold,
    position_gains,
    recall,
    recall_at_k,
    weighted_recall,
)
from lecode.metrics.declaration import Example, example_tools
from lecode.metrics.registry import get

#: The paper's clarification metrics and NDCG-gold, as the scoring job computes them.
PAPER_KEYS = ("recall", "weighted_recall", "recall_at_5", "ndcg", "ndcg_gold")


def clarification_scores(
    importance: list[int], per_question: list[list[int]]
) -> dict[str, float | None]:
    """The declared clarification metrics of one dialogue (a consultation asking one question
    per entry of ``per_question``)."""
    dialogue = Example(
        expected=None,
        why="",
        importance=tuple(importance),
        per_question=tuple(tuple(q) for q in per_question),
    ).dialogue(example_tools())
    return {key: get(key).values([dialogue])[0] for key in PAPER_KEYS}


L3 = math.log2(3)  # 1.584963
L5 = math.log2(5)  # 2.321928

# The docstring example of ndcg(): four facts, three questions, question 2 unanswered.
IMP = [3, 1, 2, 2]
PQ = [[1], [], [0, 2]]


def test_first_positions_and_gains() -> None:
    # fact 1 first at question 1; facts 0 and 2 at question 3; fact 3 never
    assert first_match_positions(IMP, PQ) == {1: 1, 0: 3, 2: 3}
    # gains: q1 = imp[1] = 1, q2 = 0, q3 = imp[0] + imp[2] = 3 + 2 = 5
    assert position_gains(IMP, PQ) == [1, 0, 5]


def test_recall_and_weighted_recall() -> None:
    # 3 of 4 facts elicited -> 0.75; importance elicited 1 + 3 + 2 = 6 of 3 + 1 + 2 + 2 = 8
    assert recall(IMP, PQ) == pytest.approx(3 / 4)
    assert weighted_recall(IMP, PQ) == pytest.approx(6 / 8)
    # weights matter: only fact 0 (importance 3 of 8) elicited -> R = 1/4, WR = 3/8
    assert recall(IMP, [[0]]) == pytest.approx(1 / 4)
    assert weighted_recall(IMP, [[0]]) == pytest.approx(3 / 8)


def test_recall_at_5_counts_unanswered_questions_as_positions() -> None:
    importance = [1, 1, 1, 1]
    # questions 1-4 elicit nothing (answered 不知道), question 5 elicits fact 0,
    # question 6 elicits facts 1 and 2: within the first five positions only fact 0 -> 1/4
    per_question = [[], [], [], [], [0], [1, 2]]
    assert recall_at_k(importance, per_question) == pytest.approx(1 / 4)
    assert recall_at_k(importance, per_question, k=6) == pytest.approx(3 / 4)
    assert recall(importance, per_question) == pytest.approx(3 / 4)
    # the same facts without the four empty positions all fall within the first five
    assert recall_at_k(importance, [[0], [1, 2]]) == pytest.approx(3 / 4)
    with pytest.raises(ValueError):
        recall_at_k(importance, per_question, k=0)


def test_recall_at_5_uses_the_first_match_only() -> None:
    # fact 0 first at question 1 (matched again at 6: ignored); fact 1 only at question 6,
    # outside the first five -> R@5 = 1/2
    per_question = [[0], [], [], [], [], [0, 1]]
    assert recall_at_k([2, 3], per_question) == pytest.approx(1 / 2)


def test_ndcg_paper_example() -> None:
    # gains [1, 0, 5]: DCG = 1/log2(2) + 0/log2(3) + 5/log2(4) = 1 + 0 + 2.5 = 3.5
    # ideal = obtained gains sorted descending [5, 1, 0]:
    #   IDCG = 5/log2(2) + 1/log2(3) + 0 = 5 + 0.630930 = 5.630930
    # NDCG = 3.5 / 5.630930 = 0.621567
    assert ndcg(IMP, PQ) == pytest.approx(3.5 / (5 + 1 / L3))
    assert ndcg(IMP, PQ) == pytest.approx(0.621567, abs=1e-6)


def test_ndcg_gold_example() -> None:
    # same DCG 3.5; ideal = gold importances sorted descending [3, 2, 2, 1] packed three per
    # question (the client's limit): [3+2+2, 1]
    #   IDCG = 7/log2(2) + 1/log2(3) = 7 + 0.630930 = 7.630930
    # NDCG_gold = 3.5 / 7.630930 = 0.458660
    assert ndcg_gold(IMP, PQ) == pytest.approx(3.5 / (7 + 1 / L3))
    assert ndcg_gold(IMP, PQ) == pytest.approx(0.458660, abs=1e-6)
    # one fact per question, the textbook ideal [3, 2, 2, 1]:
    #   IDCG = 3 + 2/log2(3) + 2/log2(4) + 1/log2(5) = 3 + 1.261860 + 1 + 0.430677 = 5.692536
    #   but question 3 elicited two facts, so the capacity rises to 2: [3+2, 2+1]
    #   IDCG = 5 + 3/log2(3) = 5 + 1.892789 = 6.892789 -> 3.5 / 6.892789 = 0.507778
    assert ndcg_gold(IMP, PQ, facts_per_question=1) == pytest.approx(3.5 / (5 + 3 / L3))
    assert ndcg_gold(IMP, PQ, facts_per_question=1) == pytest.approx(0.507778, abs=1e-6)


def test_ndcg_ignores_missed_facts_but_ndcg_gold_does_not() -> None:
    importance = [3, 3, 3, 1]
    # only fact 3 (importance 1) elicited, at question 1: gains [1]; DCG = 1
    # paper ideal [1] -> IDCG = 1 -> NDCG = 1.0
    # gold ideal [3+3+3, 1] -> IDCG = 9 + 1/log2(3) = 9 + 0.630930 = 9.630930
    # NDCG_gold = 1 / 9.630930 = 0.103832
    assert ndcg(importance, [[3]]) == pytest.approx(1.0)
    assert ndcg_gold(importance, [[3]]) == pytest.approx(1 / (9 + 1 / L3))
    assert ndcg_gold(importance, [[3]]) == pytest.approx(0.103832, abs=1e-6)


def test_ndcg_rewards_important_facts_first() -> None:
    importance = [3, 1]
    # important first: gains [3, 1] -> DCG = 3 + 1/log2(3) = IDCG -> 1.0
    assert ndcg(importance, [[0], [1]]) == pytest.approx(1.0)
    # reversed: gains [1, 3] -> DCG = 1 + 3/log2(3) = 1 + 1.892789 = 2.892789
    #           ideal [3, 1] -> IDCG = 3 + 0.630930 = 3.630930 -> 0.796708
    assert ndcg(importance, [[1], [0]]) == pytest.approx((1 + 3 / L3) / (3 + 1 / L3))
    assert ndcg(importance, [[1], [0]]) == pytest.approx(0.796708, abs=1e-6)


def test_several_facts_at_one_question() -> None:
    # one question elicits both facts: gains [6]; paper ideal [6] -> NDCG = 1.0
    # gold ideal packs both into question 1: [6] -> NDCG_gold = 1.0 (never above 1)
    assert ndcg([3, 3], [[0, 1]]) == pytest.approx(1.0)
    assert ndcg_gold([3, 3], [[0, 1]]) == pytest.approx(1.0)
    # four facts at question 1 exceed the client's 3-per-reply limit: capacity becomes 4
    assert ndcg_gold([1, 1, 1, 1], [[0, 1, 2, 3]]) == pytest.approx(1.0)


def test_duplicate_matches_count_once() -> None:
    importance = [2, 1, 3]
    # fact 0 at q1 (twice in one list), again at q2 and q3; fact 2 at q3
    dup = [[0, 0], [0], [2, 0]]
    clean = [[0], [], [2]]
    # gains [2, 0, 3] either way: recall 2/3, WR (2 + 3)/6, DCG = 2 + 3/log2(4) = 3.5
    assert position_gains(importance, dup) == [2, 0, 3]
    assert clarification_scores(importance, dup) == clarification_scores(importance, clean)
    assert recall(importance, dup) == pytest.approx(2 / 3)
    assert weighted_recall(importance, dup) == pytest.approx(5 / 6)
    # paper ideal [3, 2, 0] -> IDCG = 3 + 2/log2(3) = 4.261860 -> NDCG = 3.5/4.261860 = 0.821238
    assert ndcg(importance, dup) == pytest.approx(3.5 / (3 + 2 / L3))
    assert ndcg(importance, dup) == pytest.approx(0.821238, abs=1e-6)


def test_nothing_elicited() -> None:
    zero = dict.fromkeys(PAPER_KEYS, 0.0)
    assert clarification_scores([1, 2, 3], []) == zero  # no question asked
    assert clarification_scores([1, 2, 3], [[], [], []]) == zero  # three asked, none elicited


def test_bundle_matches_the_functions() -> None:
    assert clarification_scores(IMP, PQ) == {
        "recall": recall(IMP, PQ),
        "weighted_recall": weighted_recall(IMP, PQ),
        "recall_at_5": recall_at_k(IMP, PQ, 5),
        "ndcg": ndcg(IMP, PQ),
        "ndcg_gold": ndcg_gold(IMP, PQ),
    }


@pytest.mark.parametrize(
    ("importance", "per_question"),
    [([], []), ([1, 0], [[0]]), ([1, 2], [[2]]), ([1, 2], [[-1]])],
)
def test_invalid_input(importance: list[int], per_question: list[list[int]]) -> None:
    with pytest.raises(ValueError):
        clarification_scores(importance, per_question)
