"""Agreement among many annotators: Krippendorff's alpha with missing ratings and the
pairwise kappas, cross-checked against independent implementations (the ``krippendorff``
package, scikit-learn); utterances aligned by their texts so that a corrected transcription
error, a merge or a split keeps the utterance in the intent agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lecode.corpus.agreement import align_utterances, cohen_kappa, compare, group_agreement
from lecode.corpus.annotations import (
    AnnotatedUtterance,
    KeyFact,
    Stage1Annotation,
    Stage2Annotation,
)

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")

#: Krippendorff's own example (2011): 4 coders, 12 units, missing ratings as None.
RELIABILITY = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def units_of(matrix: list[list[int | None]]) -> list[list[int]]:
    return [[row[u] for row in matrix if row[u] is not None] for u in range(len(matrix[0]))]


def as_array(matrix: list[list[int | None]]) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)


def test_alpha_matches_the_published_values_and_the_package() -> None:
    from lecode.corpus.alpha import alpha

    units = units_of(RELIABILITY)
    # published: nominal 0.743, ordinal 0.815 (Krippendorff 2011, section C)
    assert alpha(units) == pytest.approx(0.743, abs=5e-4)
    assert alpha(units, "ordinal") == pytest.approx(0.815, abs=5e-4)
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(
            reliability_data=as_array(RELIABILITY), level_of_measurement=level
        )
        assert alpha(units, level) == pytest.approx(expected)


def test_two_coders_alpha_and_kappa_match_the_independent_implementations() -> None:
    from lecode.corpus.alpha import alpha

    rng = np.random.default_rng(0)
    a = rng.integers(1, 11, 120).tolist()
    b = [x if rng.random() < 0.7 else int(rng.integers(1, 11)) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))
    expected = krippendorff.alpha(
        reliability_data=np.array([a, b], dtype=float), level_of_measurement="nominal"
    )
    assert alpha(list(zip(a, b, strict=True))) == pytest.approx(expected)


def u(speaker: str, text: str, intent: int) -> AnnotatedUtterance:
    return AnnotatedUtterance(speaker=speaker, text=text, intent=intent)  # type: ignore[arg-type]


def s1(who: str, *utts: AnnotatedUtterance) -> Stage1Annotation:
    return Stage1Annotation(id="d", annotator=who, dialogue=utts)


PRE = s1(
    "rules",
    u("client", "我被公司辞腿了，能要赔尝吗？", 1),
    u("lawyer", "签劳动合同了吗？", 5),
    u("client", "签了三年，合同还没到期。", 2),
    u("lawyer", "建议申请劳动仲裁，主张赔偿金。", 7),
)


def test_a_corrected_transcription_error_keeps_the_utterance() -> None:
    fixed = s1(
        "ann",
        u("client", "我被公司辞退了，能要赔偿吗？", 1),
        u("lawyer", "签劳动合同了吗？", 5),
        u("client", "签了三年，合同还没到期。", 3),
        u("lawyer", "建议申请劳动仲裁，主张赔偿金。", 7),
    )
    assert align_utterances(PRE, fixed) == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_a_split_and_a_merge_keep_their_utterances() -> None:
    split = s1(
        "ann",
        u("client", "我被公司辞退了，", 1),
        u("client", "能要赔偿吗？", 3),
        u("lawyer", "签劳动合同了吗？", 5),
        u("client", "签了三年，合同还没到期。", 2),
        u("lawyer", "建议申请劳动仲裁，主张赔偿金。", 7),
    )
    pairs = align_utterances(PRE, split)
    assert [i for i, _ in pairs] == [0, 1, 2, 3] and pairs[1:] == [(1, 2), (2, 3), (3, 4)]
    merged = s1(
        "ann",
        u("client", "我被公司辞腿了，能要赔尝吗？", 1),
        u("lawyer", "签劳动合同了吗？签了三年，合同还没到期。建议申请劳动仲裁，主张赔偿金。", 7),
    )
    assert [i for i, _ in align_utterances(PRE, merged)][0] == 0
    assert len(align_utterances(PRE, merged)) == 2


def pre2(*facts: tuple[str, int]) -> Stage2Annotation:
    return Stage2Annotation(
        id="d",
        annotator="x",
        initial_query="q",
        facts=tuple(KeyFact(text=t, importance=i) for t, i in facts),  # type: ignore[arg-type]
        suggestion="s",
    )


def test_alpha_of_three_reviewers_with_partial_overlap_matches_the_package() -> None:
    # three reviewers; C did not review the dialogue at all (a missing rating for every unit)
    # and B deleted the last utterance (missing there)
    a = s1("a", *(x.model_copy() for x in PRE.dialogue))
    b = s1(
        "b",
        u("client", "我被公司辞退了，能要赔偿吗？", 1),
        u("lawyer", "签劳动合同了吗？", 6),
        u("client", "签了三年，合同还没到期。", 3),
    )
    second = {
        "d": PRE,
        "e": Stage1Annotation(id="e", annotator="rules", dialogue=PRE.dialogue[:2]),
    }
    c = {
        "e": Stage1Annotation(
            id="e",
            annotator="c",
            dialogue=(u("client", "我被公司辞退了，能要赔偿吗？", 4), PRE.dialogue[1]),
        )
    }
    f_pre = {
        "d": pre2(("用户被公司辞退", 2), ("用户签了三年劳动合同", 3)),
        "e": pre2(("用户被辞退", 1)),
    }
    f_a = {"d": pre2(("用户被公司辞退", 3), ("用户签了三年劳动合同", 3))}
    f_b = {
        "d": pre2(("用户被公司辞退", 2), ("用户签了三年劳动合同", 3)),
        "e": pre2(("用户被辞退", 2)),
    }
    f_c = {"e": pre2(("用户被辞退", 2))}
    got = group_agreement(["a", "b", "c"], second, f_pre, [{"d": a}, {"d": b}, c], [f_a, f_b, f_c])
    # units: d0..d3, e0, e1; rows: a, b, c
    intents = [
        [1, 5, 2, 7, None, None],
        [1, 6, 3, None, None, None],
        [None, None, None, None, 4, 5],
    ]
    importance = [[3, 3, None], [2, 3, 2], [None, None, 2]]
    assert got.utterance_units == 3  # d0, d1, d2 have two ratings; the rest one
    assert got.intent_alpha == pytest.approx(
        krippendorff.alpha(reliability_data=as_array(intents), level_of_measurement="nominal")
    )
    assert got.fact_units == 3
    assert got.importance_alpha == pytest.approx(
        krippendorff.alpha(reliability_data=as_array(importance), level_of_measurement="ordinal")
    )


def test_pairwise_kappa_in_compare_matches_scikit_learn() -> None:
    from lecode.metrics.advice import RougeL

    other = s1(
        "b",
        u("client", "我被公司辞退了，能要赔偿吗？", 1),
        u("lawyer", "签劳动合同了吗？", 6),
        u("client", "签了三年，合同还没到期。", 3),
        u("lawyer", "建议申请劳动仲裁，主张赔偿金。", 7),
    )
    p2 = {"d": pre2(("用户被公司辞退", 2))}
    got = compare("a", "b", {"d": PRE}, {"d": other}, p2, p2, rouge=RougeL())
    assert got.utterances_aligned == 4  # the corrected first utterance is compared too
    expected = metrics.cohen_kappa_score([1, 5, 2, 7], [1, 6, 3, 7])
    assert got.intent_kappa == pytest.approx(expected)
    assert not math.isnan(got.intent_alpha)
