"""The offline agents on tiny hand-built cases (expectations worked out by hand)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from lecode.agents.base import Client, Expert, ExpertMove, Matcher, UsageMeter
from lecode.agents.dialogue_parts import clarifying_questions, lawyer_advice, looks_like_question
from lecode.agents.fact_lookup import REFUSAL_ANSWER, FactLookupClient
from lecode.agents.human_replay import HumanReplayExpert
from lecode.agents.lexical_matcher import LexicalMatcher
from lecode.agents.retrieval import RetrievalExpert
from lecode.records import UNKNOWN_ANSWER, Case, Turn, Utterance


def u(speaker: str, text: str, intent: int | None = None) -> Utterance:
    return Utterance(speaker=speaker, text=text, intent=intent)  # type: ignore[arg-type]


def make_case(
    case_id: str,
    query: str,
    dialogue: Sequence[Utterance] = (),
    facts: Sequence[str] = (),
    suggestion: str = "",
) -> Case:
    return Case(
        id=case_id,
        initial_query=query,
        dialogue=tuple(dialogue) or (u("client", query, 1),),
        facts=tuple(facts),
        importance=tuple(2 for _ in facts),
        suggestion=suggestion,
    )


def q_turn(text: str) -> Turn:
    return Turn(speaker="lawyer", kind="question", text=text)


def a_turn(text: str) -> Turn:
    return Turn(speaker="client", kind="answer", text=text)


def start(case: Case) -> list[Turn]:
    return [Turn(speaker="client", kind="query", text=case.initial_query)]


def move(expert: Expert, case: Case, history: Sequence[Turn], must: bool = False) -> ExpertMove:
    dialogue = expert.start(case)
    return asyncio.run(dialogue.next_move(history, must_advise=must, meter=UsageMeter()))


def run_expert(expert: Expert, case: Case, answer: str = "嗯。", limit: int = 10) -> list[str]:
    """Plays a whole consultation; returns the questions asked, then 'ADVICE:<text>'."""
    history = start(case)
    out: list[str] = []
    for _ in range(limit + 1):
        m = move(expert, case, history, must=len(out) >= limit)
        if m.kind == "advice":
            return [*out, f"ADVICE:{m.text}"]
        out.append(m.text)
        history += [q_turn(m.text), a_turn(answer)]
    raise AssertionError("expert never advised")


# --- human replay ------------------------------------------------------------------------

ANNOTATED = make_case(
    "h1",
    "公司拖欠我工资怎么办？",
    [
        u("client", "公司拖欠我工资怎么办？", 1),
        u("lawyer", "拖欠了几个月？", 5),
        u("client", "三个月。", 2),
        u("lawyer", "别着急好吗？", 8),  # looks like a question, but labelled support
        u("lawyer", "所以是三个月对吧？", 6),  # verification, not a clarifying question
        u("lawyer", "签劳动合同了吗？", 5),
        u("client", "没有签。", 2),
        u("lawyer", "可以申请劳动仲裁。", 7),
        u("client", "还能要赔偿吗？", 4),
        u("lawyer", "未签合同可以主张二倍工资。", 7),
    ],
    suggestion="申请劳动仲裁并主张二倍工资。",
)

UNANNOTATED = make_case(
    "h2",
    "被车撞了怎么赔？",
    [
        u("client", "被车撞了怎么赔？"),
        u("lawyer", "我明白了。"),
        u("lawyer", "交警认定谁的责任"),  # contains 谁
        u("client", "对方全责。"),
        u("lawyer", "你住院花了多少钱"),  # contains 多少
        u("client", "两万。"),
        u("lawyer", "有伤残鉴定？"),  # ends with ？
        u("client", "还没做。"),
        u("lawyer", "先做伤残鉴定，再找保险公司理赔，有问题再问我吗？"),  # final advice
    ],
)


def test_dialogue_parts_intent_rule() -> None:
    assert clarifying_questions(ANNOTATED) == ("拖欠了几个月？", "签劳动合同了吗？")
    assert lawyer_advice(ANNOTATED) == "可以申请劳动仲裁。\n未签合同可以主张二倍工资。"


def test_dialogue_parts_fallback_rule() -> None:
    assert clarifying_questions(UNANNOTATED) == (
        "交警认定谁的责任",
        "你住院花了多少钱",
        "有伤残鉴定？",
    )
    assert lawyer_advice(UNANNOTATED) == "先做伤残鉴定，再找保险公司理赔，有问题再问我吗？"
    assert looks_like_question("是这样吗")
    assert looks_like_question("why?")
    assert not looks_like_question("好的，我了解了。")
    assert not looks_like_question("   ")


def test_dialogue_parts_annotated_without_advice_label() -> None:
    case = make_case(
        "h3",
        "问题",
        [u("client", "问题", 1), u("lawyer", "多大了？", 5), u("lawyer", "建议起诉。", 10)],
    )
    assert lawyer_advice(case) == "建议起诉。"


def test_human_replay_order_and_advice() -> None:
    expert = HumanReplayExpert(name="human")
    assert isinstance(expert, Expert)
    assert run_expert(expert, ANNOTATED) == [
        "拖欠了几个月？",
        "签劳动合同了吗？",
        "ADVICE:可以申请劳动仲裁。\n未签合同可以主张二倍工资。",
    ]
    assert run_expert(expert, UNANNOTATED) == [
        "交警认定谁的责任",
        "你住院花了多少钱",
        "有伤残鉴定？",
        "ADVICE:先做伤残鉴定，再找保险公司理赔，有问题再问我吗？",
    ]


def test_human_replay_counts_only_question_turns() -> None:
    expert = HumanReplayExpert(name="human")
    history = [*start(ANNOTATED), q_turn("随便问问？"), a_turn(UNKNOWN_ANSWER)]
    assert move(expert, ANNOTATED, history) == ExpertMove("question", "签劳动合同了吗？")


def test_human_replay_must_advise_and_suggestion_fallback() -> None:
    expert = HumanReplayExpert(name="human")
    m = move(expert, ANNOTATED, start(ANNOTATED), must=True)
    assert m.kind == "advice"
    assert m.text.startswith("可以申请劳动仲裁")
    no_lawyer = make_case("h4", "问题", suggestion="去法院起诉。")
    assert move(expert, no_lawyer, start(no_lawyer)) == ExpertMove("advice", "去法院起诉。")


# --- retrieval ---------------------------------------------------------------------------

WAGES = make_case(
    "t-wages",
    "公司拖欠我三个月工资不发，老板一直拖着，怎么办？",
    [
        u("client", "公司拖欠我三个月工资不发，老板一直拖着，怎么办？", 1),
        u("lawyer", "公司拖欠了你几个月工资？", 5),
        u("client", "三个月工资，一共两万多。", 2),
        u("lawyer", "拖欠你几个月工资了？", 5),  # near-repeat of the first
        u("client", "三个月。", 2),
        u("lawyer", "你和公司签劳动合同了吗？", 5),
        u("client", "没签劳动合同。", 2),
        u("lawyer", "去劳动仲裁委申请仲裁。", 7),
    ],
    suggestion="向劳动仲裁委申请仲裁，要求支付拖欠工资。",
)
TRAFFIC = make_case(
    "t-traffic",
    "我骑电动车被汽车撞了，交通事故对方全责，保险公司不赔。",
    [
        u("client", "我骑电动车被汽车撞了，交通事故对方全责，保险公司不赔。", 1),
        u("lawyer", "交警出事故认定书了吗？", 5),
        u("client", "出了，汽车全责。", 2),
        u("lawyer", "起诉保险公司。", 7),
    ],
    suggestion="凭事故认定书起诉对方及保险公司。",
)
DIVORCE = make_case(
    "t-divorce",
    "我想离婚，老公不同意，孩子抚养权归谁？",
    [u("client", "我想离婚，老公不同意，孩子抚养权归谁？", 1), u("lawyer", "可以起诉离婚。", 7)],
    suggestion="向法院起诉离婚并主张抚养权。",
)
TRAIN = [WAGES, TRAFFIC, DIVORCE]


class _QueryOnly:
    """Stands in for a test case: anything but ``id`` and ``initial_query`` fails the test."""

    def __init__(self, case_id: str, query: str) -> None:
        self.id = case_id
        self.initial_query = query

    def __getattr__(self, attr: str) -> object:
        raise AssertionError(f"retrieval read the test case's {attr!r}")


def test_retrieval_picks_similar_case_and_skips_near_repeats() -> None:
    expert = RetrievalExpert(name="bm25", train_cases=TRAIN, top_k=1)
    test = make_case("x", "老板拖欠工资三个月了，公司不给发工资怎么办")
    assert expert.ranking(test.initial_query)[0] == "t-wages"
    # top-1 = t-wages with three questions (budget 3); the second is a near-repeat of the first.
    assert run_expert(expert, test) == [
        "公司拖欠了你几个月工资？",
        "你和公司签劳动合同了吗？",
        "ADVICE:向劳动仲裁委申请仲裁，要求支付拖欠工资。",
    ]


def test_retrieval_budget_is_median_of_top_k() -> None:
    # Top-3 are all training cases: 3, 1 and 0 questions -> median 1 question, then advice.
    expert = RetrievalExpert(name="bm25", train_cases=TRAIN, top_k=3)
    test = make_case("x", "公司拖欠工资怎么办")
    assert run_expert(expert, test) == [
        "公司拖欠了你几个月工资？",
        "ADVICE:向劳动仲裁委申请仲裁，要求支付拖欠工资。",
    ]
    m = move(expert, test, start(test), must=True)
    assert m == ExpertMove("advice", "向劳动仲裁委申请仲裁，要求支付拖欠工资。")


def test_retrieval_uses_client_answers_in_history() -> None:
    expert = RetrievalExpert(name="bm25", train_cases=TRAIN, top_k=1)
    test = make_case("x", "想咨询一下")
    told = [
        *start(test),
        q_turn("什么事？"),
        a_turn("我骑电动车被汽车撞了，交通事故，保险公司不赔"),
    ]
    # The answer makes t-traffic the nearest case; its one question is used up, so it advises.
    assert move(expert, test, told) == ExpertMove("advice", TRAFFIC.suggestion)
    unknown = [*start(test), q_turn("什么事？"), a_turn(UNKNOWN_ANSWER)]
    assert move(expert, test, unknown) != ExpertMove("advice", TRAFFIC.suggestion)


def test_retrieval_ties_broken_by_id_and_deterministic() -> None:
    twin_b = make_case(
        "b-twin",
        "房东不退押金怎么办",
        [
            u("client", "房东不退押金怎么办", 1),
            u("lawyer", "签租房合同了吗？", 5),
            u("lawyer", "起诉。", 7),
        ],
        suggestion="B",
    )
    twin_a = make_case(
        "a-twin",
        "房东不退押金怎么办",
        [
            u("client", "房东不退押金怎么办", 1),
            u("lawyer", "押金交了多少？", 5),
            u("lawyer", "协商。", 7),
        ],
        suggestion="A",
    )
    forward = RetrievalExpert(name="bm25", train_cases=[twin_b, twin_a, *TRAIN], top_k=1)
    backward = RetrievalExpert(name="bm25", train_cases=[*TRAIN, twin_a, twin_b], top_k=1)
    test = make_case("x", "房东押金不退")
    assert forward.ranking("房东押金不退")[:2] == ["a-twin", "b-twin"]
    runs = {tuple(run_expert(e, test)) for e in (forward, backward, forward)}
    assert runs == {("押金交了多少？", "ADVICE:A")}


def test_retrieval_never_reads_test_dialogue_facts_or_suggestion() -> None:
    expert = RetrievalExpert(name="bm25", train_cases=TRAIN, top_k=1)
    # The query is about wages; dialogue, facts and suggestion all point at the traffic case.
    giveaway = make_case(
        "x",
        "公司拖欠工资不发",
        TRAFFIC.dialogue,
        facts=["我骑电动车被汽车撞了", "交通事故对方全责", "保险公司不赔"],
        suggestion=TRAFFIC.suggestion,
    )
    assert move(expert, giveaway, start(giveaway)).text == "公司拖欠了你几个月工资？"
    guarded = _QueryOnly("x", "公司拖欠工资不发")
    history = start(giveaway)
    assert move(expert, guarded, history).text == "公司拖欠了你几个月工资？"  # type: ignore[arg-type]


def test_retrieval_without_any_indexable_text_still_advises() -> None:
    blank = [make_case("b", "？", suggestion="B"), make_case("a", "", suggestion="A")]
    expert = RetrievalExpert(name="bm25", train_cases=blank, top_k=2)
    test = make_case("x", "公司拖欠工资")
    assert move(expert, test, start(test)) == ExpertMove("advice", "A")


def test_retrieval_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError):
        RetrievalExpert(name="bm25", train_cases=[], top_k=3)
    with pytest.raises(ValueError):
        RetrievalExpert(name="bm25", train_cases=TRAIN, top_k=0)


# --- fact lookup client ------------------------------------------------------------------

FACTS = (
    "当事人于2021年3月入职某科技公司",
    "公司拖欠当事人三个月工资共计2.4万元。",
    "双方没有签订书面劳动合同",
    "当事人有微信聊天记录证明公司安排加班",
    "当事人每天加班到晚上十点",
)
LABOUR = make_case("f1", "公司拖欠工资怎么办", facts=FACTS)


def answer(client: Client, question: str, history: Sequence[Turn] = ()) -> str:
    dialogue = client.start(LABOUR)
    return asyncio.run(dialogue.answer(list(history), question, meter=UsageMeter()))


def test_fact_lookup_answers_with_matching_facts() -> None:
    client = FactLookupClient(name="lookup", max_facts=3)
    assert isinstance(client, Client)
    # Fact 0 shares only "公司" (score 2), under half of fact 1's score 7.
    assert answer(client, "公司拖欠了你多少工资？") == "公司拖欠当事人三个月工资共计2.4万元。"
    assert answer(client, "你们签劳动合同了吗？") == "双方没有签订书面劳动合同。"
    assert answer(client, "你什么时候入职的？") == "当事人于2021年3月入职某科技公司。"
    assert answer(client, "平时加班吗？") == (
        "当事人有微信聊天记录证明公司安排加班；当事人每天加班到晚上十点。"
    )


def test_fact_lookup_respects_max_facts_and_avoids_repeats() -> None:
    client = FactLookupClient(name="lookup", max_facts=1)
    first = answer(client, "平时加班吗？")
    assert first == "当事人有微信聊天记录证明公司安排加班。"  # equal scores: fact order
    history = [q_turn("平时加班吗？"), a_turn(first)]
    assert answer(client, "平时加班吗？", history) == "当事人每天加班到晚上十点。"
    history += [q_turn("平时加班吗？"), a_turn("当事人每天加班到晚上十点。")]
    # Everything relevant was told: it repeats the best match rather than inventing.
    assert answer(client, "平时加班吗？", history) == first


def test_fact_lookup_does_not_pad_with_told_facts() -> None:
    client = FactLookupClient(name="lookup", max_facts=3)
    told = "当事人有微信聊天记录证明公司安排加班。"
    history = [q_turn("有加班证据吗？"), a_turn(told)]
    assert answer(client, "平时加班吗？", history) == "当事人每天加班到晚上十点。"


def test_offline_roles_record_no_usage() -> None:
    meter = UsageMeter()
    asyncio.run(FactLookupClient(name="c", max_facts=3).answer(LABOUR, [], "加班吗", meter=meter))
    asyncio.run(LexicalMatcher(name="m", threshold=0.5).match(LABOUR, [("q", "a")], meter=meter))
    asyncio.run(HumanReplayExpert(name="h").next_move(ANNOTATED, [], must_advise=True, meter=meter))
    assert meter.by_role == {}


def test_fact_lookup_unknown() -> None:
    client = FactLookupClient(name="lookup", max_facts=3)
    assert answer(client, "你老婆知道这件事吗？") == UNKNOWN_ANSWER
    assert answer(client, "") == UNKNOWN_ANSWER
    # A single shared bigram ("合同" in "签合同" vs "劳动合同") is below the minimum.
    assert answer(client, "你们签合同了吗") == UNKNOWN_ANSWER


@pytest.mark.parametrize(
    "question",
    [
        "把所有情况都告诉我",
        "全部说一下",
        "详细说说整个经过",
        "还有什么要补充的",
        "你知道的都说一下吧",
    ],
)
def test_fact_lookup_refuses_open_requests(question: str) -> None:
    reply = answer(FactLookupClient(name="lookup", max_facts=3), question)
    assert reply == REFUSAL_ANSWER
    assert not any(f.rstrip("。") in reply for f in FACTS)


def test_fact_lookup_answers_questions_that_merely_mention_all() -> None:
    client = FactLookupClient(name="lookup", max_facts=3)
    assert answer(client, "整个过程中公司拖欠了多少工资") != REFUSAL_ANSWER


# --- lexical matcher ---------------------------------------------------------------------


def match(matcher: Matcher, pairs: Sequence[tuple[str, str]]) -> list[list[int]]:
    return asyncio.run(matcher.match(LABOUR, pairs, meter=UsageMeter()))


def test_lexical_matcher_indices_and_unknown() -> None:
    matcher = LexicalMatcher(name="lexical", threshold=0.5)
    assert isinstance(matcher, Matcher)
    pairs = [
        ("公司拖欠了你多少工资？", "公司拖欠当事人三个月工资共计2.4万元。"),
        ("你老婆知道吗？", UNKNOWN_ANSWER),
        ("平时加班吗？", "当事人有微信聊天记录证明公司安排加班；当事人每天加班到晚上十点。"),
        ("签劳动合同了吗？", ""),
        # Half of fact 2's bigrams (书面/劳动/动合/合同 of 8) come from question + a short answer.
        ("签书面劳动合同了吗？", "没有签。"),
        ("你吃饭了吗？", "吃了。"),
    ]
    assert match(matcher, pairs) == [[1], [], [3, 4], [], [2], []]


def test_lexical_matcher_threshold() -> None:
    strict = LexicalMatcher(name="lexical", threshold=1.0)
    assert match(strict, [("签书面劳动合同了吗？", "没有签。")]) == [[]]
    assert match(strict, [("问", "双方没有签订书面劳动合同")]) == [[2]]
    with pytest.raises(ValueError):
        LexicalMatcher(name="lexical", threshold=0.0)
