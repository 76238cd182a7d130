"""The fidelity audit of the simulated client: each detector on hand-made answers (with the
expected numbers worked out by hand), and each check shown to catch the misbehaving mock
client it claims to catch (and nothing on the well-behaved one)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.agents.base import UsageMeter
from lecode.agents.context import RoleContext
from lecode.agents.fact_lookup import FactLookupClient
from lecode.agents.lexical_matcher import LexicalMatcher
from lecode.agents.matchers import build_matcher
from lecode.audit import (
    CHECKS,
    answering_facts,
    audit_all,
    audit_answer,
    audit_frame,
    audit_transcript,
    clauses,
    contradictions,
    flagged_answers,
    is_negated,
    relevant_facts,
    says_unknown,
    sentences,
    support,
    unsupported_sentences,
)
from lecode.dataset import load_cases
from lecode.mock import MockServer
from lecode.mock.players import INVENTED
from lecode.records import Case, Matches, Transcript, Turn, Utterance
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import mock_endpoint, model_cfg, runtime, simulate

FACTS = [
    "双方签订了劳动合同",
    "公司没有为我缴纳社保",
    "我于2019年3月入职该公司",
    "公司拖欠工资三个月",
]


# --------------------------------------------------------------------------- detectors


def test_sentences_split_at_sentence_ends_not_commas() -> None:
    assert sentences("是的，签了。公司没交社保；\n工资也欠着！") == [
        "是的，签了",
        "公司没交社保",
        "工资也欠着",
    ]


def test_support_by_hand() -> None:
    # content words of the sentence: 2020, 3, 劳动合同, 年, 月, 签, 签了 (7); found in the
    # facts as substrings: all but 2020 (the facts say 2019) and 签了 -> 5/7; its bigrams
    # (02 0年 20 3月 了劳 动合 劳动 合同 年3 月签 签了) share 20 3月 动合 劳动 合同 年3 with
    # the facts' -> 6/11, less.
    s = "是的，我们签了劳动合同，是在2020年3月签的"
    assert support(s, FACTS) == pytest.approx(5 / 7)
    # an invented sentence: none of 五年 今年 养 我家 旺财 狗叫 (另外 is a filler) occurs
    assert support("另外，我家的狗叫旺财，今年已经养了五年了", FACTS) == 0.0
    # only particles and pronouns: no claim
    assert support("是的是的", FACTS) is None


def test_unsupported_sentences_skip_hedges_and_questions() -> None:
    answer = "公司没有为我缴纳社保。我家的狗叫旺财。这个我不清楚。您问的是合同吗？"
    assert unsupported_sentences(answer, FACTS) == ["我家的狗叫旺财"]


def test_negation_by_clause() -> None:
    assert clauses("没有签，但劳动合同后来补了") == ["没有签", "劳动合同后来补了"]
    assert is_negated("公司没有为我缴纳社保") and is_negated("社保公司一直没交")
    assert not is_negated("公司给我交了社保")
    assert not is_negated("不是没有劳动合同")  # two negations


def test_contradictions_by_hand() -> None:
    # 我们没有签劳动合同 covers 双方签订了劳动合同: words 劳动合同 of 劳动合同/双方/签订 (1/3),
    # bigrams 劳动 动合 合同 of 双方 方签 签订 劳动 动合 合同 (3/6 = 0.5); the other way
    # its words 签 劳动合同 both occur in the fact (2/2); negated vs not.
    # 公司给我交了社保 covers 公司没有为我缴纳社保: words 公司 社保 of 公司/社保/缴纳/为
    # (2/4); the other way 公司 社保 of 公司/交/社保 (2/3); not negated vs negated.
    found = contradictions("我们没有签劳动合同。公司给我交了社保。", FACTS)
    assert [(c.fact, c.clause) for c in found] == [
        (0, "我们没有签劳动合同"),
        (1, "公司给我交了社保"),
    ]
    # the same facts stated with the same polarity (the negation after the topic counts)
    assert contradictions("双方签了劳动合同，社保公司一直没交", FACTS) == []
    # a clause about something else shares only a topic word: 我没在公司上过夜班 covers
    # 1/4 words (公司) and 1/4 bigrams of 公司没有为我缴纳社保
    assert contradictions("我没在公司上过夜班", FACTS) == []
    # covered one way only: 用户丈夫借给对方十五万元 covers 用户/丈夫 of 用户丈夫没有前科 (2/3)
    # but that covers only 用户/丈夫 of its 5 words (2/5)
    assert contradictions("用户丈夫借给对方十五万元", ["用户丈夫没有前科"]) == []
    # a fact restated word for word contradicts nothing, whatever else it shares
    assert contradictions("公司没有为我缴纳社保", ["公司为我缴纳了社保", *FACTS]) == []
    # a hedge makes no claim, so it contradicts nothing
    assert contradictions("劳动合同的事我不清楚", FACTS) == []


def test_withheld_needs_a_fact_the_question_names() -> None:
    assert relevant_facts("你们签劳动合同了吗", FACTS) == [0]
    assert says_unknown("不知道") and says_unknown("这个我真不清楚。") and not says_unknown("签了")
    a = audit_answer(FACTS, "你们签劳动合同了吗", "不知道", disclosed=[])
    assert a.flags == ("withheld",) and a.withheld == (0,)
    # nothing in the facts answers this question: 不知道 is the protocol
    assert audit_answer(FACTS, "您有录音吗", "不知道", disclosed=[]).flags == ()
    # a refusal of a "tell me everything" request is never withholding
    assert audit_answer(FACTS, "把劳动合同的所有情况都告诉我", "不知道", disclosed=[]).flags == ()


def test_over_limit_counts_the_matchers_facts() -> None:
    four = audit_answer(FACTS, "说说工作情况", "x", disclosed=[0, 1, 2, 3])
    assert four.over_limit and four.source == "matcher"
    assert not audit_answer(FACTS, "说说工作情况", "x", disclosed=[0, 1, 2]).over_limit
    # without a match record the answer alone decides: every fact's text -> 4 facts
    lexical = audit_answer(FACTS, "说说工作情况", "；".join(FACTS))
    assert lexical.source == "lexical" and lexical.disclosed == (0, 1, 2, 3) and lexical.over_limit


def _case(facts: list[str] = FACTS) -> Case:
    return Case(
        id="k1",
        initial_query="公司欠我工资怎么办？",
        dialogue=(),
        facts=tuple(facts),
        importance=tuple(2 for _ in facts),
        suggestion="申请劳动仲裁。",
    )


def _transcript(pairs: list[tuple[str, str]], stop: str = "advice") -> Transcript:
    turns = [Turn(speaker="client", kind="query", text="公司欠我工资怎么办？")]
    for q, a in pairs:
        turns.append(Turn(speaker="lawyer", kind="question", text=q))
        turns.append(Turn(speaker="client", kind="answer", text=a))
    turns.append(Turn(speaker="lawyer", kind="advice", text="申请劳动仲裁。"))
    return Transcript(
        case_id="k1",
        expert="e",
        strategy="zero_shot",
        client="c",
        turns=tuple(turns),
        stop_reason=stop,  # type: ignore[arg-type]
    )


def test_dialogue_rates_by_hand() -> None:
    t = _transcript(
        [
            ("你们签劳动合同了吗", "我们没有签劳动合同"),  # contradicted
            ("公司交社保了吗", "公司没有为我缴纳社保"),  # fine
            ("什么时候入职的", "不知道"),  # withheld? 入职 covers 1/4 words, bigrams 1/8: no
            ("工资的情况呢", "公司拖欠工资三个月。我家的狗叫旺财。"),  # unsupported
        ]
    )
    m = Matches(
        case_id="k1",
        expert="e",
        strategy="zero_shot",
        matcher="lexical",
        n_facts=4,
        per_question=((0,), (1,), (), (3,)),
    )
    d = audit_transcript(_case(), t, m)
    assert [a.flags for a in d.answers] == [("contradicted",), (), (), ("unsupported",)]
    row = audit_frame([d]).row(0, named=True)
    assert row["answers"] == 4 and row["n_flagged"] == 2
    assert row["contradicted"] == 0.25 and row["unsupported"] == 0.25
    assert row["over_limit"] == 0.0 and row["withheld"] == 0.0
    assert row["flagged"] == 0.5 and row["behaved"] == 0.0
    flagged = flagged_answers([d])
    assert [f["q"] for f in flagged] == [1, 4] and flagged[0]["contradicted"][0]["fact"] == 0
    # an infrastructure error says nothing about the client: missing, not zero
    err = audit_frame([audit_transcript(_case(), _transcript([("a", "b")], stop="error"))])
    assert err.row(0, named=True)["behaved"] is None


def test_offline_fact_lookup_client_behaves_on_the_sample() -> None:
    """The offline client answers only with fact text, at most 3 facts, 不知道 only when no
    fact scores: the lexical audit flags nothing it says except what the matcher credits."""
    from lecode.agents.human_replay import HumanReplayExpert
    from lecode.evaluation.consultations import simulate_case

    repo = Path(__file__).resolve().parent.parent
    cases = load_cases(repo / "data" / "sample" / "sample_testset.jsonl")
    client = FactLookupClient("fact_lookup")
    expert = HumanReplayExpert(name="human_replay")
    ts = [
        asyncio.run(simulate_case(c, expert, client, strategy="baseline", max_turns=10))
        for c in cases
    ]
    matcher = LexicalMatcher("lexical")
    ms = [
        Matches(
            case_id=t.case_id,
            expert=t.expert,
            strategy=t.strategy,
            matcher="lexical",
            n_facts=c.n_facts,
            per_question=tuple(
                tuple(x) for x in asyncio.run(matcher.match(c, t.qa_pairs(), meter=UsageMeter()))
            ),
        )
        for c, t in zip(cases, ts, strict=True)
    ]
    audits = audit_all(cases, ts, ms)
    assert len(audits) == len(cases)
    by_id = {c.id: c for c in cases}
    for d in audits:
        answered = answering_facts(by_id[d.case_id])
        for a in d.answers:
            assert not a.unsupported and not a.contradicted, (d.case_id, a)
            # its 不知道 to a real lawyer's question that the real client answered with a fact
            # is withholding (the client found no fact by the question's words)
            real = answered.get("".join(a.question.split()), ())
            assert a.withheld == (real if a.answer == "不知道" else ()), (d.case_id, a)
    crim = next(d for d in audits if d.case_id == "crim-001").by_position()[3]
    assert crim.answer == "不知道" and crim.withheld == (2, 3, 4)


# --------------------------------------------------------------------------- the mock


@pytest.fixture
def cases(tmp_path: Path) -> list[Case]:
    return load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(4)))


@pytest.fixture
def mock(
    tmp_path: Path, cases: list[Case], monkeypatch: pytest.MonkeyPatch
) -> Iterator[MockServer]:
    with mock_endpoint(tmp_path / "cases.jsonl", monkeypatch) as server:
        yield server


def _audits(cases: list[Case], tmp_path: Path, url: str) -> list:
    rt = runtime(tmp_path / "store")
    try:
        ts = asyncio.run(simulate(cases, rt, model_cfg(url)))
        matcher = build_matcher("mock", model_cfg(url), RoleContext(runtime=rt))

        async def match_all() -> list[Matches]:
            out = []
            for c, t in zip(cases, ts, strict=True):
                per_q = await matcher.match(c, t.qa_pairs(), meter=UsageMeter())
                out.append(
                    Matches(
                        case_id=t.case_id,
                        expert=t.expert,
                        strategy=t.strategy,
                        matcher="mock",
                        n_facts=c.n_facts,
                        per_question=tuple(tuple(x) for x in per_q),
                    )
                )
            return out

        ms = asyncio.run(match_all())
    finally:
        rt.close()
    return audit_all(cases, ts, ms)


def _rates(audits: list) -> dict[str, float]:
    answers = [a for d in audits for a in d.answers]
    assert answers
    return {c: sum(bool(getattr(a, c)) for a in answers) / len(answers) for c in CHECKS}


def test_well_behaved_mock_client_is_clean(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    assert _rates(_audits(cases, tmp_path, mock.url)) == dict.fromkeys(CHECKS, 0.0)


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("client_leaks", "over_limit"),
        ("client_invents", "unsupported"),
        ("client_contradicts", "contradicted"),
    ],
)
def test_each_check_catches_its_misbehaviour(
    tmp_path: Path, mock: MockServer, cases: list[Case], fault: str, check: str
) -> None:
    """Every answer to a question naming a fact misbehaves; the check flags exactly those."""
    mock.set_faults({fault: 1.0})
    audits = _audits(cases, tmp_path, mock.url)
    for d in audits:
        case = next(c for c in cases if c.id == d.case_id)
        for a in d.answers:
            names_fact = any(f in a.question for f in case.facts)
            if fault == "client_leaks":
                expected = case.n_facts > 3  # every answer carries all the case's facts
            elif fault == "client_invents":
                expected = True
                assert a.unsupported == (INVENTED.rstrip("。"),)
            else:
                expected = names_fact
            assert bool(getattr(a, check)) == expected, (d.case_id, a)
            others = set(a.flags) - {check}
            if fault == "client_leaks":
                # the leaked answer states every fact: nothing invented or contradicted
                assert not others, a
    assert _rates(audits)[check] > 0.5


def test_withholding_mock_client_is_caught(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    mock.set_faults({"client_withholds": 1.0})
    audits = _audits(cases, tmp_path, mock.url)
    for d in audits:
        case = next(c for c in cases if c.id == d.case_id)
        for a in d.answers:
            named = [i for i, f in enumerate(case.facts) if f in a.question]
            assert a.answer == "不知道"
            assert bool(a.withheld) == bool(named), a
            assert set(named) <= set(a.withheld)
    assert _rates(audits)["withheld"] > 0.5


# --------------------------------------------------------------------------- the report


def _scores_and_audit() -> tuple[object, object, list]:
    import polars as pl

    from lecode.report.spec import ReportedSystem

    systems = [ReportedSystem("e", "zero_shot", "E")]
    # three dialogues; the client misbehaved in k2 (one answer of two flagged)
    audit = pl.DataFrame(
        {
            "case_id": ["k1", "k2", "k3"],
            "expert": ["e"] * 3,
            "strategy": ["zero_shot"] * 3,
            "answers": [2, 2, 1],
            "n_flagged": [0, 1, 0],
            "over_limit": [0.0, 0.5, 0.0],
            "unsupported": [0.0, 0.0, 0.0],
            "withheld": [0.0, 0.0, 0.0],
            "contradicted": [0.0, 0.0, 0.0],
            "flagged": [0.0, 0.5, 0.0],
            "behaved": [1.0, 0.0, 1.0],
        }
    )
    scores = pl.DataFrame(
        {
            "case_id": ["k1", "k2", "k3"],
            "expert": ["e"] * 3,
            "strategy": ["zero_shot"] * 3,
            "n_facts": [4, 4, 4],
            "stop_reason": ["advice"] * 3,
            "turns": [2, 2, 1],
            "recall": [0.5, 1.0, 0.25],
            "weighted_recall": [0.5, 1.0, 0.25],
            "recall_at_5": [0.5, 1.0, 0.25],
            "ndcg": [1.0, 1.0, 1.0],
        }
    )
    return scores, audit, systems


def test_audit_and_robustness_tables_by_hand() -> None:
    from lecode.report.outputs import TableOptions, build_documents

    scores, audit, systems = _scores_and_audit()
    settings = TableOptions(resamples=200)
    docs = build_documents(scores, systems, 4, settings=settings, audit=audit)
    a = {c.column: c for c in docs["audit"].rows[0].cells}
    # Leak: mean of 0, 0.5, 0 = 1/6 -> 16.7; Behaved: 2 of 3 dialogues
    assert a["over_limit"].value == pytest.approx(100 / 6) and a["over_limit"].n == 3
    assert a["over_limit"].N == 4
    assert a["behaved"].value == pytest.approx(200 / 3)
    assert a["flagged"].display.startswith("16.7")
    assert "3 facts" in a["over_limit"].description
    assert {c.aggregation for r in docs["audit"].rows for c in r.cells} == {"share"}
    robust = {r.setting: {c.column: c for c in r.cells} for r in docs["robustness"].rows}
    # recall on all dialogues: (0.5 + 1 + 0.25) / 3; on the behaved k1 and k3: 0.375
    assert robust["all dialogues"]["recall"].value == pytest.approx(175 / 3)
    assert robust["client behaved"]["recall"].value == pytest.approx(37.5)
    assert robust["client behaved"]["recall"].n == 2
    assert robust["all dialogues"]["recall"].aggregation == "mean"
    assert robust["client behaved"]["recall"].aggregation == "subset_mean"
    assert "(2/4)†" in robust["client behaved"]["recall"].display
    md = docs["robustness"].render()["md"]
    assert "client behaved" in md


def test_usage_table_counts_flagged_client_answers() -> None:
    import polars as pl

    from lecode.report.outputs import TableOptions, build_documents
    from lecode.report.usage import USAGE_SCHEMA

    scores, audit, systems = _scores_and_audit()
    rows = [
        {"expert": "e", "strategy": "zero_shot", "case_id": k, "role": role}
        for k in ("k1", "k2", "k3")
        for role in ("expert", "client")
    ]
    usage = pl.DataFrame(rows).with_columns(
        [pl.lit(1, dtype=USAGE_SCHEMA[c]).alias(c) for c in USAGE_SCHEMA if c not in rows[0]]
    )
    docs = build_documents(
        scores, systems, 4, settings=TableOptions(resamples=200), usage=usage, audit=audit
    )
    got = {(r.label, r.setting): {c.column: c for c in r.cells} for r in docs["usage"].rows}
    assert got[("E", "client")]["flagged_answers"].value == 1
    assert got[("E", "expert")]["flagged_answers"].display == "—"
    assert got[("all systems", "client")]["flagged_answers"].value == 1
    md = docs["usage"].render()["md"]
    assert "flagged_answers" in md.splitlines()[2]


def test_viewer_marks_flagged_answers() -> None:
    from lecode.report.spec import ReportedSystem
    from lecode.report.viewer import viewer_data

    t = _transcript(
        [("你们签劳动合同了吗", "我们没有签劳动合同"), ("公司交社保了吗", "公司没有为我缴纳社保")]
    )
    data = viewer_data([_case()], [ReportedSystem("e", "zero_shot", "E")], transcripts=[t])
    run = data["runs"]["E"]["k1"]
    answers = [x for x in run["turns"] if x["kind"] == "answer"]
    assert answers[0]["audit"]["flags"] == ["contradicted"]
    assert "audit" not in answers[1]
    assert run["audit"] == {"answers": 2, "flagged": 1}


def test_lexical_disclosure_does_not_count_a_fact_the_stated_ones_explain() -> None:
    facts = ["双方签订了劳动合同", "公司没有为我缴纳社保", "公司与我签订了劳动合同并约定月薪八千"]
    # the answer states facts 0 and 1 (coverage 1 each); of fact 2's words 八千 公司 劳动合同
    # 月薪 签订 约定 the answer holds 公司 劳动合同 签订 (3/6 = 0.5, bigrams 5/10), exactly
    # what facts 0 and 1 hold themselves: the answer says no more about it, so it is not counted
    answer = "双方签订了劳动合同；公司没有为我缴纳社保。"
    assert audit_answer(facts, "q", answer).disclosed == (0, 1)
    # stated in full it counts (1 > 0.5)
    assert audit_answer(facts, "q", answer + facts[2]).disclosed == (0, 1, 2)


# --------------------------------------------------------------------------- 不知道, real questions


def _replayed_case(case_id: str) -> Case:
    """A case whose real dialogue has two lawyer questions: the real client answered the first
    with fact 0 and did not know the answer to the second."""
    return Case(
        id=case_id,
        initial_query="公司不给我发工资怎么办？",
        dialogue=(
            Utterance(speaker="client", text="公司不给我发工资怎么办？"),
            Utterance(speaker="lawyer", text="您什么时候开始在那里上班的？"),
            Utterance(speaker="client", text="我是2019年3月入职该公司的。"),
            Utterance(speaker="lawyer", text="公司的营业执照您见过吗？"),
            Utterance(speaker="client", text="不知道。"),
        ),
        facts=("我于2019年3月入职该公司", "老板口头承诺年底补发"),
        importance=(2, 2),
        suggestion="申请劳动仲裁。",
    )


def test_unknown_to_a_question_the_real_client_answered_is_withholding() -> None:
    """The replayed questions name no fact (the question alone covers none), yet the real
    client answered the first with fact 0: 不知道 to it is withholding, 不知道 to the second
    (which the real client could not answer either) is not. Worked out by hand: k1 withholds
    on 1 of 2 answers, k2 answers the first with the fact; Withhold = (1/2 + 0) / 2 = 25%,
    Behaved = 1 of 2 dialogues; the robustness table keeps only k2."""
    import polars as pl

    from lecode.report.outputs import TableOptions, build_documents
    from lecode.report.spec import ReportedSystem

    q1, q2 = "您什么时候开始在那里上班的？", "公司的营业执照您见过吗？"
    k1, k2 = _replayed_case("k1"), _replayed_case("k2")
    assert relevant_facts(q1, k1.facts) == []  # the old, question-only check saw nothing
    assert answering_facts(k1) == {"您什么时候开始在那里上班的？": (0,)}
    t1 = _transcript([(q1, "不知道"), (q2, "不知道")]).model_copy(update={"case_id": "k1"})
    t2 = _transcript([(q1, "我于2019年3月入职该公司。"), (q2, "不知道")]).model_copy(
        update={"case_id": "k2"}
    )
    a1, a2 = audit_transcript(k1, t1), audit_transcript(k2, t2)
    assert [a.withheld for a in a1.answers] == [(0,), ()]
    assert [a.flags for a in a2.answers] == [(), ()]
    audit = audit_frame([a1, a2])
    assert audit["withheld"].to_list() == [0.5, 0.0]
    assert audit["behaved"].to_list() == [0.0, 1.0]

    scores = pl.DataFrame(
        {
            "case_id": ["k1", "k2"],
            "expert": ["e"] * 2,
            "strategy": ["zero_shot"] * 2,
            "n_facts": [2, 2],
            "stop_reason": ["advice"] * 2,
            "turns": [2, 2],
            "recall": [0.0, 0.5],
            "weighted_recall": [0.0, 0.5],
            "recall_at_5": [0.0, 0.5],
            "ndcg": [0.0, 1.0],
        }
    )
    audit = audit.with_columns(pl.lit("e").alias("expert"))
    docs = build_documents(
        scores,
        [ReportedSystem("e", "zero_shot", "E")],
        2,
        settings=TableOptions(resamples=200),
        audit=audit,
    )
    cells = {c.column: c for c in docs["audit"].rows[0].cells}
    assert cells["withheld"].value == pytest.approx(25.0)
    assert cells["behaved"].value == pytest.approx(50.0)
    robust = {r.setting: {c.column: c for c in r.cells} for r in docs["robustness"].rows}
    assert robust["all dialogues"]["recall"].value == pytest.approx(25.0)
    assert robust["client behaved"]["recall"].value == pytest.approx(50.0)
    assert robust["client behaved"]["recall"].n == 1


def test_a_mock_client_that_never_answers_real_questions_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped mock client with the human_replay expert on the sample: it answers 不知道 to
    real lawyers' questions, which the audit now sees as withholding wherever the real client
    answered with a fact."""
    from lecode.agents.clients import build_client
    from lecode.agents.human_replay import HumanReplayExpert
    from lecode.evaluation.consultations import simulate_case

    repo = Path(__file__).resolve().parent.parent
    sample = repo / "data" / "sample" / "sample_testset.jsonl"
    cases = load_cases(sample)[:4]
    with mock_endpoint(sample, monkeypatch) as server:
        rt = runtime(tmp_path / "store")
        try:
            client = build_client(
                "mock",
                model_cfg(server.url),
                "first_person_dialogue",
                RoleContext(runtime=rt),
            )
            expert = HumanReplayExpert(name="human_replay")

            async def run_all() -> list[Transcript]:
                return list(
                    await asyncio.gather(
                        *(
                            simulate_case(c, expert, client, strategy="baseline", max_turns=10)
                            for c in cases
                        )
                    )
                )

            ts = asyncio.run(run_all())
        finally:
            rt.close()
    audits = audit_all(cases, ts)
    answers = [a for d in audits for a in d.answers]
    unknown = [a for a in answers if a.answer.strip("。") == "不知道"]
    assert len(unknown) > len(answers) / 2  # the mock's client cannot place these questions
    answered = {k: v for c in cases for k, v in answering_facts(c).items()}
    for a in unknown:
        assert a.withheld == answered.get("".join(a.question.split()), ()), a
    assert _rates(audits)["withheld"] > 0.5
