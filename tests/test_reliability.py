"""The client-reliability study (Table 4): sampling of contexts and questions, answering,
auditing and judging against the mock, and the table's cells, worked out by hand."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from lecode.agents.context import RoleContext
from lecode.agents.fact_lookup import FactLookupClient
from lecode.llm.parsing import ReplyFormatError
from lecode.mock import MockServer
from lecode.records import Case, Utterance
from lecode.reliability import (
    JUDGE_TEMPLATES,
    WRITER_TEMPLATES,
    ContextQuestionWriter,
    ReliabilityAnswer,
    ReliabilityItem,
    ReliabilityJudge,
    ReliabilityJudgement,
    build_role,
    case_values,
    lawyer_item,
    lawyer_items,
    parse_questions,
    parse_reliability_judgement,
    sample_cases,
    writer_items,
)
from lecode.reliability.steps.reliability import answer_items
from lecode.reliability.table4 import paper_rows, table4, table4_document
from lecode.report.paper import load_paper_numbers
from lecode.stats import ResamplePlan
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime

REPO = Path(__file__).resolve().parent.parent
FACTS = ("双方签订了劳动合同", "公司没有为我缴纳社保", "公司拖欠工资三个月")


def _case(case_id: str = "k1", n_rounds: int = 8, annotated: bool = True) -> Case:
    """Initial query, then n_rounds of (lawyer, client); lawyer utterances 1, 2, 4, 6, 7, 8
    (1-based rounds) are clarifying questions (intent 5), the others verification (6)."""
    dialogue = [Utterance(speaker="client", text="公司欠我工资怎么办？", intent=1)]
    for r in range(1, n_rounds + 1):
        intent = 5 if r in (1, 2, 4, 6, 7, 8) else 6
        dialogue.append(
            Utterance(speaker="lawyer", text=f"问题{r}？", intent=intent if annotated else None)
        )
        dialogue.append(
            Utterance(speaker="client", text=f"回答{r}。", intent=2 if annotated else None)
        )
    return Case(
        id=case_id,
        initial_query="公司欠我工资怎么办？",
        dialogue=tuple(dialogue),
        facts=FACTS,
        importance=(3, 2, 3),
        suggestion="申请劳动仲裁。",
    )


# --------------------------------------------------------------------------- sampling


def test_context_is_five_rounds_then_the_next_three_clarifying_questions() -> None:
    item = lawyer_item(_case(), context_rounds=5, n_questions=3)
    assert item is not None
    # rounds 1-5 are the context; the clarifying questions after them are rounds 6, 7, 8
    assert item.questions == ("问题6？", "问题7？", "问题8？")
    texts = [t.text for t in item.context]
    assert texts[0] == "公司欠我工资怎么办？" and texts[-1] == "回答5。" and len(texts) == 11
    assert [t.kind for t in item.context[:3]] == ["query", "question", "answer"]


def test_fewer_questions_after_the_context_take_the_last_ones() -> None:
    # 7 rounds: after round 5 only rounds 6 and 7 ask; the last three clarifying questions
    # are rounds 4, 6, 7, and the context is the (at most 5) rounds before round 4: 1-3
    item = lawyer_item(_case(n_rounds=7), context_rounds=5, n_questions=3)
    assert item is not None
    assert item.questions == ("问题4？", "问题6？", "问题7？")
    assert [t.text for t in item.context][-1] == "回答3。" and len(item.context) == 7
    # with 2 rounds of context: rounds 1-2, then the clarifying questions of rounds 4, 6, 7
    # (round 3 verifies, it is no clarifying question)
    short = lawyer_item(_case(n_rounds=7), context_rounds=2, n_questions=3)
    assert short is not None
    assert short.questions == ("问题4？", "问题6？", "问题7？")
    assert [t.text for t in short.context] == [
        "公司欠我工资怎么办？",
        "问题1？",
        "回答1。",
        "问题2？",
        "回答2。",
    ]
    # too few clarifying questions at all
    assert lawyer_item(_case(n_rounds=2), context_rounds=5, n_questions=3) is None


def test_sampling_is_seeded_and_independent_of_file_order() -> None:
    cases = [_case(f"k{i:02d}") for i in range(20)] + [_case("short", n_rounds=2)]
    a = sample_cases(cases, 5, 7)
    b = sample_cases(list(reversed(cases)), 5, 7)
    assert [c.id for c in a] == [c.id for c in b] and len(a) == 5
    assert [c.id for c in sample_cases(cases, 5, 8)] != [c.id for c in a]
    items = lawyer_items(cases, n=100, seed=0, context_rounds=5, questions=3)
    assert len(items) == 20  # every eligible case, the short one left out


def test_parsers() -> None:
    j = parse_reliability_judgement('{"reason": "有依据", "relevance": 1, "factuality": 0}')
    assert (j.relevance, j.factuality) == (1, 0)
    for bad in (
        '{"reason": "x", "relevance": 2, "factuality": 0}',
        '{"relevance": 1, "factuality": 1}',
        '{"reason": "x", "relevance": true, "factuality": 1}',
        "好的",
    ):
        with pytest.raises(ReplyFormatError):
            parse_reliability_judgement(bad)
    assert parse_questions('{"questions": ["甲？", "乙？"]}', 2) == ["甲？", "乙？"]
    with pytest.raises(ReplyFormatError):
        parse_questions('{"questions": ["甲？", "甲？"]}', 2)


# --------------------------------------------------------------------------- answering


def test_offline_client_answers_are_audited() -> None:
    item = ReliabilityItem(
        case=_case(),
        context=lawyer_item(_case(), 5, 3).context,  # type: ignore[union-attr]
        questions=("你们签劳动合同了吗？", "社保交了吗？", "您有录音吗？"),
    )
    answers = asyncio.run(
        answer_items([item], FactLookupClient("fact_lookup"), strategy="instruct_dialogue")
    )
    assert [a.answer for a in answers] == [
        "双方签订了劳动合同。",
        "公司没有为我缴纳社保。",
        "不知道",
    ]
    assert all(a.audit is not None and a.audit["flags"] == [] for a in answers)
    assert [a.value("audit_factual") for a in answers] == [1.0, 1.0, 1.0]
    assert answers[0].value("relevance") is None  # no judge


def _answer(case_id: str, q: int, **kw: object) -> ReliabilityAnswer:
    return ReliabilityAnswer(
        case_id=case_id, client="c", strategy="instruct_dialogue", q=q, question="?", **kw
    )  # type: ignore[arg-type]


def test_case_values_and_table4_cells_by_hand() -> None:
    ok = ReliabilityJudgement(relevance=1, factuality=1, reason="r")
    bad = ReliabilityJudgement(relevance=0, factuality=1, reason="r")
    clean = {"flags": []}
    answers = [
        _answer("a", 1, answer="x", audit=clean, judge=ok, judge_status="ok"),
        _answer("a", 2, answer="x", audit={"flags": ["unsupported"]}, judge=bad, judge_status="ok"),
        _answer("b", 1, answer="x", audit={"flags": ["withheld"]}, judge=ok, judge_status="ok"),
        _answer("b", 2, status="error", error="boom"),
        _answer("c", 1, status="error", error="boom"),
    ]
    ids = ["a", "b", "c"]
    # relevance: a = (1 + 0)/2, b = 1 (its failed answer is missing), c has none
    assert np.allclose(case_values(answers, ids, "relevance"), [0.5, 1.0, np.nan], equal_nan=True)
    assert np.allclose(
        case_values(answers, ids, "audit_factual"), [0.5, 1.0, np.nan], equal_nan=True
    )
    assert np.allclose(
        case_values(answers, ids, "audit_protocol"), [1.0, 0.0, np.nan], equal_nan=True
    )
    runs = [{"client": "c", "label": "Client C", "strategy": "instruct_dialogue"}]
    paper = load_paper_numbers(REPO / "data" / "paper_numbers.csv")
    t = table4(
        runs,
        {("c", "instruct_dialogue"): answers},
        ids,
        plan=ResamplePlan(resamples=200),
        judged=True,
        paper=paper,
    )
    by = {(r.group, r.label): r for r in t.rows}
    rel = by[("Relevance (judge)", "Client C")].cells
    assert rel[0].value == pytest.approx(75.0) and (rel[0].n, rel[0].N) == (2, 3)
    assert rel[1].value is None and rel[2].value is None  # strategies not run: "—"
    assert (
        by[("Protocol (audit: at most 3 facts, no withheld 不知道)", "Client C")].cells[0].value
        == 50.0
    )
    # the paper's rows beside ours, as transcribed
    qmax = by[("Relevance (judge)", "Qwen-max")]
    assert qmax.kind == "paper" and [c.value for c in qmax.cells] == [92.4, 92.2, 97.0]
    assert {c.aggregation for c in qmax.cells} == {"published"}
    assert {c.aggregation for r in t.rows if r.kind != "paper" for c in r.cells} == {"share"}
    doc = table4_document(
        t,
        spec_digest="d",
        systems={},
        threshold=0.9,
        bootstrap={"resamples": 200, "seed": 0, "confidence": 0.95},
    )
    ours = next(r for r in doc.rows if r.label == "Client C" and r.group == "Relevance (judge)")
    assert ours.cells[0].description.startswith("share of a consultation's answers the judge")
    assert (
        next(r for r in doc.rows if r.kind == "paper")
        .cells[0]
        .description.startswith("the published Table 4 value")
    )
    assert [c.value for c in by[("Factuality (judge)", "Qwen2.5-7B")].cells] == [85.0, 94.3, 96.0]
    assert [label for label, _ in paper_rows(paper)] == [
        "Qwen2.5-7B",
        "Qwen2.5-32B",
        "Qwen2.5-72B",
        "Qwen-max",
    ]
    # without a judge the judge blocks show "—" but keep the paper's rows
    unjudged = table4(
        runs,
        {("c", "instruct_dialogue"): answers},
        ids,
        plan=ResamplePlan(resamples=200),
        judged=False,
        paper=paper,
    )
    assert next(r for r in unjudged.rows if r.label == "Client C").cells[0].value is None


# --------------------------------------------------------------------------- the mock


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    with MockServer() as server:
        yield server


def _mock_study(tmp_path: Path, url: str, strategy: str) -> list[ReliabilityAnswer]:
    from lecode.agents.clients import build_client

    case = _case()
    item = ReliabilityItem(
        case=case,
        context=lawyer_item(case, 5, 3).context,  # type: ignore[union-attr]
        questions=(
            f"关于“{FACTS[0]}”这件事，能具体说说吗？",
            f"关于“{FACTS[2]}”这件事，能具体说说吗？",
            "您有录音吗？",
        ),
    )
    rt = runtime(tmp_path / "store")
    try:
        ctx = RoleContext(runtime=rt)
        client = build_client("mock", model_cfg(url), strategy, ctx)
        judge = build_role(ReliabilityJudge, "mock", model_cfg(url), ctx, JUDGE_TEMPLATES)
        return asyncio.run(answer_items([item], client, strategy=strategy, judge=judge))
    finally:
        rt.close()


@pytest.mark.parametrize(
    "strategy", ["instruct_dialogue", "instruct_question", "first_person_dialogue"]
)
def test_llm_client_studied_against_the_mock(
    tmp_path: Path, mock: MockServer, strategy: str
) -> None:
    answers = _mock_study(tmp_path, mock.url, strategy)
    assert [a.answer for a in answers] == [FACTS[0], FACTS[2], "不知道"]
    assert all(a.judge_status == "ok" for a in answers)
    assert [a.value("relevance") for a in answers] == [1.0, 1.0, 1.0]
    assert [a.value("factuality") for a in answers] == [1.0, 1.0, 1.0]
    assert [a.value("audit_factual") for a in answers] == [1.0, 1.0, 1.0]
    assert mock.requests_by_role() == {"client": 3, "judge": 3}


def test_misbehaving_mock_client_loses_factuality_and_protocol(
    tmp_path: Path, mock: MockServer
) -> None:
    mock.set_faults({"client_invents": 1.0}, roles=None)
    invented = _mock_study(tmp_path / "a", mock.url, "first_person_dialogue")
    assert [a.value("factuality") for a in invented] == [0.0, 0.0, 0.0]  # the judge sees it
    assert [a.value("audit_factual") for a in invented] == [0.0, 0.0, 0.0]  # so does the audit
    mock.set_faults({"client_withholds": 1.0})
    withheld = _mock_study(tmp_path / "b", mock.url, "first_person_dialogue")
    # the first two questions name a fact: not relevant (judge), withheld (audit)
    assert [a.value("relevance") for a in withheld] == [0.0, 0.0, 1.0]
    assert [a.value("audit_protocol") for a in withheld] == [0.0, 0.0, 1.0]


def test_question_writer_against_the_mock(tmp_path: Path, mock: MockServer) -> None:
    rt = runtime(tmp_path / "store")
    try:
        writer = build_role(
            ContextQuestionWriter,
            "mock",
            model_cfg(mock.url),
            RoleContext(runtime=rt),
            WRITER_TEMPLATES,
        )
        items = asyncio.run(
            writer_items(
                [_case("a"), _case("b")], writer, n=5, seed=0, context_rounds=5, questions=3
            )
        )
    finally:
        rt.close()
    assert [i.case.id for i in items] == ["a", "b"]
    assert all(len(i.questions) == 3 and i.source == "writer" for i in items)
    assert items[0].context[-1].text == "回答5。"
    assert mock.requests_by_role() == {"writer": 2}
