"""Strategies as code: the counting stand-in plays any program (hand-counted calls), bad
programs are named, and the mock endpoint plays the case and turn a request's metadata names."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote

import pytest

from lecode.agents.llm_common import dialogue_headers
from lecode.llm.errors import LLMConfigError
from lecode.mock.casedata import CaseText
from lecode.mock.players import OFF_FACT_QUESTION, LawyerScript, Players, fact_question
from lecode.records import Case
from lecode.strategies.calls import Call
from lecode.strategies.counting import (
    ADVICE_CHARS,
    QUESTION_CHARS,
    TEXT_REPLY_CHARS,
    client_calls,
    expert_calls,
)
from lecode.strategies.program import (
    Ask,
    ClientAsk,
    ClientProgram,
    DialogueSoFar,
    ExpertProgram,
    Move,
    State,
)
from lecode.strategies.templates import load_strategy

CASE = Case(
    id="c-1",
    initial_query="我被公司辞退了，没有拿到补偿。",
    dialogue=(),
    facts=("公司没有提前通知", "当事人工作了三年"),
    importance=(3, 2),
    suggestion="可以申请劳动仲裁，主张经济补偿。",
)
ZERO_SHOT = load_strategy("expert", "zero_shot")
TURN = Call("turn", "turn", "move")
ADVISE = Call("advise", "advise", "advice")
NOTE = Call("note", "advise", "text")  # a private call rendered from the advice-only template


class TwoPrivateCalls(ExpertProgram):
    """Every turn two private notes, then the move; the notes are concurrent when ``gather``."""

    name = "two_private_calls"
    templates = {"turn": "expert/zero_shot", "advise": "expert/advise_only"}

    def __init__(self, gather: bool = False) -> None:
        self.gather = gather

    async def play(self, state: State, dialogue: DialogueSoFar, ask: Ask) -> Move:
        values = dialogue.values()
        if self.gather:
            await asyncio.gather(ask.text(NOTE, values), ask.text(NOTE, values))
        else:
            await ask.text(NOTE, values)
            await ask.text(NOTE, values)
        return await ask.move(ADVISE if dialogue.must_advise else TURN, values)


@pytest.mark.parametrize("gather", [False, True])
def test_the_forecast_counts_every_call_a_program_makes(gather: bool) -> None:
    # 2 questions of at most 5: three turns of (note, note, turn); the last turn advises
    calls = expert_calls(TwoPrivateCalls(gather), ZERO_SHOT, CASE, 2, 5)
    assert [(c.turn, c.call.purpose) for c in calls] == [
        (k, p) for k in range(3) for p in ("note", "note", "turn")
    ]
    assert [c.reply_chars for c in calls if c.call.purpose == "turn"] == [
        QUESTION_CHARS,
        QUESTION_CHARS,
        ADVICE_CHARS,
    ]
    assert {c.reply_chars for c in calls if c.call.purpose == "note"} == {TEXT_REPLY_CHARS}
    # the prompt's characters are the rendered messages' (the dialogue grows each turn)
    first, later = calls[2].prompt_chars, calls[5].prompt_chars
    assert later - first == len("\n律师：") + QUESTION_CHARS + len("\n用户：") + QUESTION_CHARS
    # 3 questions of at most 2: the third turn is forced advice
    calls = expert_calls(TwoPrivateCalls(gather), ZERO_SHOT, CASE, 3, 2)
    assert [c.call.purpose for c in calls] == ["note", "note", "turn"] * 2 + [
        "note",
        "note",
        "advise",
    ]


class UnmappedTemplate(ExpertProgram):
    name = "unmapped"
    templates = {"turn": "expert/zero_shot"}

    async def play(self, state: Any, dialogue: DialogueSoFar, ask: Ask) -> Move:
        return await ask.move(Call("turn", "nope", "move"), dialogue.values())


class MissingValue(ExpertProgram):
    name = "missing_value"
    templates = {"turn": "expert/zero_shot"}

    async def play(self, state: Any, dialogue: DialogueSoFar, ask: Ask) -> Move:
        return await ask.move(TURN, {"dialogue": "d"})


def test_bad_programs_are_named() -> None:
    with pytest.raises(LLMConfigError, match="'unmapped': call 'turn' names template key 'nope'"):
        expert_calls(UnmappedTemplate(), ZERO_SHOT, CASE, 1, 3)
    with pytest.raises(LLMConfigError, match="expert/zero_shot: placeholder problem"):
        expert_calls(MissingValue(), ZERO_SHOT, CASE, 1, 3)


class AskTwice(ClientProgram):
    """A client that drafts privately, then answers."""

    name = "ask_twice"
    templates = {"answer": "client/first_person_dialogue"}

    async def answer(self, state: State, dialogue: DialogueSoFar, ask: ClientAsk) -> str:
        values = dialogue.answer_values(state.case)
        await ask.text(Call("draft", "answer", "text"), values)
        return await ask.answer(Call("answer", "answer", "answer"), values)


def test_client_programs_are_counted_per_question() -> None:
    templates = load_strategy("client", "first_person_dialogue")
    calls = client_calls(AskTwice(), templates, CASE, 3)
    assert [(c.turn, c.call.purpose) for c in calls] == [
        (k, p) for k in (1, 2, 3) for p in ("draft", "answer")
    ]


def test_the_mock_plays_the_case_and_turn_the_metadata_names() -> None:
    cases = [
        CaseText(
            "a", "甲的咨询内容比较长", ("甲事实一", "甲事实二", "甲事实三"), (1, 1, 1), "甲建议"
        ),
        CaseText(
            "b", "乙的咨询内容比较长", ("乙事实一", "乙事实二", "乙事实三"), (1, 1, 1), "乙建议"
        ),
    ]
    players = Players(cases)
    script = LawyerScript.for_case(cases[1])
    expect = [
        OFF_FACT_QUESTION if t < 0 else fact_question(cases[1].facts[t]) for t in script.targets
    ]
    # the prompt shows case a and no lawyer line; the metadata names case b at each turn
    prompt = "用户：甲的咨询内容比较长"
    for k, question in enumerate(expect):
        reply = players.expert(
            "move", prompt, json_format=False, no_marker=False, case_id="b", turn=k
        )
        assert reply == "提问：" + question
    done = players.expert(
        "move", prompt, json_format=False, no_marker=False, case_id="b", turn=len(expect)
    )
    assert done == "建议：乙建议"
    # without metadata the prompt decides (case a, no question asked yet)
    first_a = LawyerScript.for_case(cases[0]).question(cases[0], 0)
    assert players.expert("move", prompt, json_format=False, no_marker=False) == "提问：" + first_a
    # the client answers from case b's facts, the question from the metadata
    asked = fact_question("乙事实二")
    assert players.client("no facts listed here", case_id="b", question=asked) == "乙事实二"
    assert players.client("no facts listed here", case_id="b", question="别的问题") == "不知道"


def test_dialogue_headers_are_percent_encoded_utf8() -> None:
    h = dialogue_headers("案件/7", "m/zero_shot/0/案件/7", 2, "您好？")
    assert all(v.isascii() for v in h.values())
    assert unquote(h["X-Lecode-Case"]) == "案件/7" and h["X-Lecode-Turn"] == "2"
    assert unquote(h["X-Lecode-Question"]) == "您好？"
    assert "X-Lecode-Question" not in dialogue_headers("c", "d", 0)
