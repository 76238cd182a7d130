"""score_dialogues: units, missingness rules and the single batched BERTScore call."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lecode.evaluation.scoring import score_dialogues
from lecode.metrics.advice import BertScores, RougeL
from lecode.records import Case, Judgement, JudgeScores, Matches, Transcript, Turn

EXPERT, STRATEGY = "gpt", "zero_shot"
CLARIFICATION = ("recall", "weighted_recall", "recall_at_5", "ndcg", "ndcg_gold")
ADVICE = ("rouge_l", "bertscore_f1")
JUDGE = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")
ALL = CLARIFICATION + ADVICE + JUDGE
SUGGESTION = "先协商，再起诉。"


class FakeBert:
    """Records its calls; scores each pair as 0.5 + position / 100."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        self.calls.append((list(candidates), list(references)))
        return [0.5 + i / 100 for i in range(len(candidates))]

    def score_detailed(self, candidates: Sequence[str], references: Sequence[str]) -> BertScores:
        """Like score(); a pair counts as truncated when its candidate is over 20 characters."""
        f1 = self.score(candidates, references)
        return BertScores(f1=f1, truncated=[len(c) > 20 for c in candidates])


def case(cid: str, suggestion: str = SUGGESTION) -> Case:
    return Case(
        id=cid,
        initial_query="公司拖欠工资怎么办？",
        dialogue=(),
        facts=("事实一", "事实二", "事实三", "事实四"),
        importance=(3, 1, 2, 2),
        suggestion=suggestion,
    )


def transcript(cid: str, n_questions: int, advice: str | None, stop: str = "advice") -> Transcript:
    turns = [Turn(speaker="client", kind="query", text="公司拖欠工资怎么办？")]
    for q in range(n_questions):
        turns.append(Turn(speaker="lawyer", kind="question", text=f"问题{q}？"))
        turns.append(Turn(speaker="client", kind="answer", text="不知道"))
    if advice is not None:
        turns.append(Turn(speaker="lawyer", kind="advice", text=advice))
    return Transcript(
        case_id=cid,
        expert=EXPERT,
        strategy=STRATEGY,
        client="sim",
        turns=tuple(turns),
        stop_reason=stop,  # type: ignore[arg-type]
    )


def matches(cid: str, per_question: list[list[int]], status: str = "ok") -> Matches:
    return Matches(
        case_id=cid,
        expert=EXPERT,
        strategy=STRATEGY,
        matcher="m",
        n_facts=4,
        per_question=tuple(tuple(q) for q in per_question),
        status=status,  # type: ignore[arg-type]
    )


def judgement(cid: str, status: str = "ok", overall: int = 7) -> Judgement:
    scores = JudgeScores(
        professionalism=8, fluency=9, completeness=6, satisfaction=7, safety=10, overall=overall
    )
    return Judgement(
        case_id=cid,
        expert=EXPERT,
        strategy=STRATEGY,
        judge="j",
        scores=scores if status == "ok" else None,
        status=status,  # type: ignore[arg-type]
        error=None if status == "ok" else "judge failed",
    )


def test_complete_dialogue_units() -> None:
    # three questions, the second answered 不知道 (empty), as in the NDCG docstring example:
    # R = 3/4, WR = 6/8, R@5 = 3/4, NDCG = 3.5/5.630930, NDCG_gold = 3.5/5.692536
    bert = FakeBert()
    [row] = score_dialogues(
        {"c1": case("c1")},
        [transcript("c1", 3, "建议先协商；不行就起诉！")],
        {"c1": matches("c1", [[1], [], [0, 2]])},
        {"c1": judgement("c1")},
        RougeL(punctuation=True),
        bert,
    )
    assert (row.turns, row.n_facts, row.stop_reason) == (3, 4, "advice")
    assert row.recall == pytest.approx(0.75)
    assert row.weighted_recall == pytest.approx(0.75)
    assert row.recall_at_5 == pytest.approx(0.75)
    assert row.ndcg == pytest.approx(0.621567, abs=1e-6)
    assert row.ndcg_gold == pytest.approx(0.458660, abs=1e-6)  # see test_metrics_clarification
    # ROUGE-L worked in test_metrics_advice: 3/7 with punctuation kept
    assert row.rouge_l == pytest.approx(3 / 7)
    assert row.bertscore_f1 == pytest.approx(0.5)
    # judge scores stay on their raw 1..10 scale
    assert (row.professionalism, row.fluency, row.completeness) == (8.0, 9.0, 6.0)
    assert (row.satisfaction, row.safety, row.overall) == (7.0, 10.0, 7.0)
    assert bert.calls == [(["建议先协商；不行就起诉！"], [SUGGESTION])]


def test_error_transcript_is_missing_everywhere() -> None:
    [row] = score_dialogues(
        {"c1": case("c1")},
        [transcript("c1", 2, "建议起诉。", stop="error")],
        {"c1": matches("c1", [[0], [1]])},
        {"c1": judgement("c1")},
        RougeL(punctuation=True),
        FakeBert(),
    )
    assert row.stop_reason == "error"
    assert row.turns is None  # an infrastructure failure leaves AT missing too
    assert all(getattr(row, name) is None for name in ALL)


def test_no_advice_means_no_advice_or_judge_metrics() -> None:
    # stopped on a parse error after two questions: the last utterance is the client's
    # answer, which must never be scored as advice; clarification metrics still count
    bert = FakeBert()
    [row] = score_dialogues(
        {"c1": case("c1")},
        [transcript("c1", 2, None, stop="parse_error")],
        {"c1": matches("c1", [[0], []])},
        {"c1": judgement("c1")},
        RougeL(punctuation=True),
        bert,
    )
    assert row.recall == pytest.approx(0.25)  # fact 0 only
    assert all(getattr(row, name) is None for name in ADVICE + JUDGE)
    assert bert.calls == []  # nothing to score: no call at all


def test_failed_or_absent_matches_leave_clarification_missing() -> None:
    rows = score_dialogues(
        {"c1": case("c1"), "c2": case("c2")},
        [transcript("c1", 1, "建议起诉。"), transcript("c2", 1, "建议起诉。")],
        {"c1": matches("c1", [], status="error")},  # c2: no record at all
        {"c1": judgement("c1"), "c2": judgement("c2")},
        RougeL(punctuation=True),
        None,
    )
    for row in rows:
        assert all(getattr(row, name) is None for name in CLARIFICATION)
        assert row.rouge_l is not None and row.overall == 7.0
        assert row.bertscore_f1 is None  # bert=None: missing, not zero


def test_failed_or_absent_judgement_leaves_judge_missing() -> None:
    rows = score_dialogues(
        {"c1": case("c1"), "c2": case("c2")},
        [transcript("c1", 0, "建议起诉。"), transcript("c2", 0, "建议起诉。")],
        {"c1": matches("c1", []), "c2": matches("c2", [])},
        {"c1": judgement("c1", status="error")},
        RougeL(punctuation=True),
        FakeBert(),
    )
    for row in rows:
        assert all(getattr(row, name) is None for name in JUDGE)
        assert row.recall == 0.0 and row.ndcg == 0.0  # no questions: elicited nothing
        assert row.turns == 0
        assert row.rouge_l is not None and row.bertscore_f1 is not None


def test_bertscore_is_one_batched_call_over_dialogues_with_advice() -> None:
    cases = {c: case(c) for c in ("a", "b", "c", "d")}
    cases["d"] = case("d", suggestion="  ")  # no reference: advice metrics missing
    transcripts = [
        transcript("a", 1, "建议甲。"),
        transcript("b", 1, None, stop="abstain"),
        transcript("c", 1, "建议丙。", stop="max_turns"),
        transcript("d", 1, "建议丁。"),
    ]
    bert = FakeBert()
    rows = score_dialogues(
        cases,
        transcripts,
        {c: matches(c, [[0]]) for c in cases},
        {},
        RougeL(punctuation=True),
        bert,
    )
    assert bert.calls == [(["建议甲。", "建议丙。"], [SUGGESTION, SUGGESTION])]
    assert [r.case_id for r in rows] == ["a", "b", "c", "d"]
    assert [r.bertscore_f1 for r in rows] == [pytest.approx(0.5), None, pytest.approx(0.51), None]
    assert [r.rouge_l is None for r in rows] == [False, True, False, True]
    assert all(r.recall == pytest.approx(0.25) for r in rows)


def test_empty_advice_scores_zero_not_missing() -> None:
    [row] = score_dialogues(
        {"c1": case("c1")},
        [transcript("c1", 0, "")],
        {},
        {},
        RougeL(punctuation=True),
        None,
    )
    assert row.rouge_l == 0.0


def test_inconsistent_inputs_raise() -> None:
    rouge = RougeL(punctuation=True)
    with pytest.raises(ValueError, match="unknown case"):
        score_dialogues({}, [transcript("x", 0, "建议。")], {}, {}, rouge, None)
    with pytest.raises(ValueError, match="more than one transcript"):
        t = transcript("c1", 0, "建议。")
        score_dialogues({"c1": case("c1")}, [t, t], {}, {}, rouge, None)
    with pytest.raises(ValueError, match="questions"):
        # two question positions in the matches, three questions in the transcript
        score_dialogues(
            {"c1": case("c1")},
            [transcript("c1", 3, "建议。")],
            {"c1": matches("c1", [[0], []])},
            {},
            rouge,
            None,
        )
    other = matches("c1", [[0]]).model_copy(update={"expert": "other"})
    with pytest.raises(ValueError, match="paired with"):
        score_dialogues(
            {"c1": case("c1")}, [transcript("c1", 1, "建议。")], {"c1": other}, {}, rouge, None
        )


def test_truncated_bertscore_pairs_are_flagged_per_dialogue() -> None:
    cases = {c: case(c) for c in ("a", "b", "c")}
    transcripts = [
        transcript("a", 1, "建议甲。"),
        transcript("b", 1, "建议" + "很长" * 20),
        transcript("c", 1, None, stop="abstain"),
    ]
    rows = score_dialogues(
        cases,
        transcripts,
        {c: matches(c, [[0]]) for c in cases},
        {},
        RougeL(punctuation=True),
        FakeBert(),
    )
    assert [r.bertscore_truncated for r in rows] == [0, 1, None]
