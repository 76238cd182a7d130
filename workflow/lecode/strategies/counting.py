"""Counting a strategy's calls by playing it: a stand-in ``ask`` that renders every call the
strategy makes (so its prompt's length is known), records it, and replies with fixed-length
text, steering the dialogue to a given number of questions.

This is how the forecast knows what a strategy costs (:mod:`lecode.forecast`): from the
strategy itself, whatever it does, never from a copy of its plan.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from lecode.llm.errors import LLMConfigError
from lecode.llm.templates import PromptTemplate
from lecode.records import Case, Turn
from lecode.strategies.calls import Call, Gate
from lecode.strategies.program import ClientProgram, DialogueSoFar, ExpertProgram, Move, Values

QUESTION_CHARS = 40
ANSWER_CHARS = 40
ADVICE_CHARS = 400
CONFIDENCE_REPLY_CHARS = 3
TEXT_REPLY_CHARS = 200  # a private reply (a plan, a summary)

T = TypeVar("T")


@dataclass(frozen=True)
class Counted:
    """One call a strategy made: the questions asked before it, the call, and the characters
    of its prompt (as rendered) and of its stand-in reply."""

    turn: int
    call: Call
    prompt_chars: int
    reply_chars: int


def prompt_chars(template: PromptTemplate, call: Call, values: Values) -> int:
    """Characters of ``call``'s messages, rendered as the LLM roles render them."""
    if call.closing is not None:
        closing = template.section(call.closing, **values)
        messages = template.render(**values, closing=closing)
    else:
        messages = template.render(**values)
    return sum(len(m["content"]) for m in messages)


class _Counter:
    def __init__(self, strategy: str, templates: Mapping[str, PromptTemplate], turn: int):
        self.strategy = strategy
        self.templates = templates
        self.turn = turn
        self.calls: list[Counted] = []

    def _count(self, call: Call, values: Values, reply_chars: int) -> None:
        template = self.templates.get(call.template)
        if template is None:
            raise LLMConfigError(
                f"strategy {self.strategy!r}: call {call.purpose!r} names template key "
                f"{call.template!r}, which its templates do not map"
            )
        self.calls.append(
            Counted(self.turn, call, prompt_chars(template, call, values), reply_chars)
        )

    async def text(self, call: Call, values: Values) -> str:
        self._count(call, values, TEXT_REPLY_CHARS)
        return "x" * TEXT_REPLY_CHARS


class CountingAsk(_Counter):
    """The expert's stand-in ``ask`` for one turn: ``ready`` says whether this turn advises
    (a gate says ready; a ``move`` call advises)."""

    def __init__(
        self, strategy: str, templates: Mapping[str, PromptTemplate], turn: int, ready: bool
    ) -> None:
        super().__init__(strategy, templates, turn)
        self.advise = ready

    async def move(self, call: Call, values: Values) -> Move:
        advice = call.reply == "advice" or (call.reply != "question" and self.advise)
        if advice:
            self._count(call, values, ADVICE_CHARS)
            return Move("advice", "x" * ADVICE_CHARS)
        self._count(call, values, QUESTION_CHARS)
        return Move("question", "x" * QUESTION_CHARS)

    async def ready(self, gate: Gate, values: Values) -> bool:
        self._count(gate.call, values, CONFIDENCE_REPLY_CHARS)
        return self.advise


class CountingClientAsk(_Counter):
    """The client's stand-in ``ask`` for one answer."""

    async def answer(self, call: Call, values: Values) -> str:
        self._count(call, values, ANSWER_CHARS)
        return "x" * ANSWER_CHARS


def drive(make: Callable[[], Awaitable[T]]) -> T:
    """The result of the coroutine ``make()`` makes. A strategy that awaits only its ``ask``
    finishes without an event loop (fast); one that awaits anything else (``asyncio.gather``
    of its calls) is played again from the start in a fresh event loop."""
    coro = make()
    with warnings.catch_warnings():
        # calls a gather made before it found no loop are dropped: they are played again below
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        try:
            coro.send(None)  # type: ignore[attr-defined]
        except StopIteration as done:
            return done.value
        except RuntimeError:  # it needs a running loop; a real error recurs below
            pass
        coro.close()  # type: ignore[attr-defined]
        del coro
        gc.collect()  # drop them now, inside this filter

    async def again() -> T:
        return await make()

    return asyncio.run(again())


def _pair(history: list[Turn]) -> None:
    history.append(Turn(speaker="lawyer", kind="question", text="x" * QUESTION_CHARS))
    history.append(Turn(speaker="client", kind="answer", text="x" * ANSWER_CHARS))


def expert_calls(
    program: ExpertProgram,
    templates: Mapping[str, PromptTemplate],
    case: Case,
    questions: int,
    max_turns: int,
) -> list[Counted]:
    """Every call ``program`` makes in a dialogue about ``case`` in which it asks
    ``questions`` questions (at most ``max_turns``; then advice is forced), in order.
    Re-asks after malformed replies are not counted."""

    async def play() -> list[Counted]:
        state = program.start(case)
        history = [Turn(speaker="client", kind="query", text=case.initial_query)]
        out: list[Counted] = []
        for k in range(questions + 1):
            must = k >= max_turns
            ask = CountingAsk(program.name, templates, k, ready=must or k == questions)
            move = await program.play(state, DialogueSoFar(tuple(history), max_turns, must), ask)
            out += ask.calls
            if move.kind != "question":
                break
            _pair(history)
        return out

    return drive(play)


def client_calls(
    program: ClientProgram,
    templates: Mapping[str, PromptTemplate],
    case: Case,
    questions: int,
) -> list[Counted]:
    """Every call ``program`` makes answering ``questions`` questions about ``case``."""

    async def play() -> list[Counted]:
        state = program.start(case)
        history = [Turn(speaker="client", kind="query", text=case.initial_query)]
        out: list[Counted] = []
        for k in range(questions):
            question = "x" * QUESTION_CHARS
            shown = (*history, Turn(speaker="lawyer", kind="question", text=question))
            ask = CountingClientAsk(program.name, templates, k + 1)
            await program.answer(state, DialogueSoFar(shown, 0, question=question), ask)
            out += ask.calls
            _pair(history)
        return out

    return drive(play)
