"""Declarative strategies: the paper's strategies written as data, played by a thin
:class:`~lecode.strategies.program.ExpertProgram` / ``ClientProgram`` over their declaration.

An expert turn is a sequence of calls (:meth:`ExpertStrategy.turn_calls`): on the first turn an
optional ``opening`` call (private: its reply is never shown to the client; it becomes a template
value of every later call of the dialogue), then either the forced advice, or a confidence
``gate`` whose answer picks its ``advise`` or ``ask`` call, or the plain ``turn`` call.
:meth:`ExpertStrategy.play` makes these calls through the ``ask`` it is given, like any other
strategy; a strategy the vocabulary does not foresee is written as a program of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lecode.llm.errors import LLMConfigError
from lecode.records import Case
from lecode.strategies.calls import Call, Gate
from lecode.strategies.program import (
    Ask,
    ClientAsk,
    ClientProgram,
    DialogueSoFar,
    ExpertProgram,
    Move,
    ReplyFormat,
)


@dataclass
class ExpertState:
    """One dialogue's state, created by :meth:`ExpertStrategy.start`: the case, whether the
    opening call was made, and the template values the dialogue added (the opening's reply)."""

    case: Case
    opened: bool = False
    values: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExpertStrategy(ExpertProgram):
    """An expert strategy: ``templates`` maps a template key (what a :class:`Call` names) to a
    template name under ``workflow/prompts`` (no suffix).

    ``reply_format``: how move replies are written (``marked``: 提问：/建议：; ``json``:
    ``{"action": ..., "content": ...}``, sent with the JSON response format). ``reask``: the
    template key of the re-ask after a malformed move reply.
    """

    name: str
    templates: Mapping[str, str]
    forced: Call
    turn: Call | None = None
    gate: Gate | None = None
    reask: str = "reask"
    reply_format: ReplyFormat = "marked"
    opening: Call | None = None
    #: the template value the opening call's reply is stored in
    opening_value: str = "plan"

    def __post_init__(self) -> None:
        if (self.turn is None) == (self.gate is None):
            raise LLMConfigError(
                f"expert strategy {self.name!r}: declare either a turn call or a gate, not "
                "both or neither"
            )
        keys = [self.reask, *(c.template for c in self.calls())]
        if self.gate is not None:
            keys.append(self.gate.reask)
        missing = sorted({k for k in keys if k not in self.templates})
        if missing:
            raise LLMConfigError(
                f"expert strategy {self.name!r}: calls name template keys {missing} that "
                f"its templates do not map ({sorted(self.templates)})"
            )
        expected = [(self.forced, ("advice",)), (self.turn, ("move", "question", "advice"))]
        if self.gate is not None:
            expected += [
                (self.gate.call, ("yes_no", "score")),
                (self.gate.ask, ("question",)),
                (self.gate.advise, ("advice",)),
            ]
        for call, replies in expected:
            if call is not None and call.reply not in replies:
                raise LLMConfigError(
                    f"expert strategy {self.name!r}: call {call.purpose!r} replies "
                    f"{call.reply!r}; it must reply {' or '.join(replies)}"
                )
        if self.opening is not None and self.opening.reply != "text":
            raise LLMConfigError(f"expert strategy {self.name!r}: the opening call replies text")

    def calls(self) -> tuple[Call, ...]:
        """Every call the strategy can make, each once."""
        out = [self.forced]
        if self.turn is not None:
            out.append(self.turn)
        if self.gate is not None:
            out += [self.gate.call, self.gate.ask, self.gate.advise]
        if self.opening is not None:
            out.append(self.opening)
        return tuple(dict.fromkeys(out))

    @property
    def scored(self) -> bool:
        """Whether the gate compares a 0-1 confidence with the model's threshold."""
        return self.gate is not None and self.gate.call.reply == "score"

    def start(self, case: Case) -> ExpertState:
        """The state of a new dialogue about ``case``."""
        return ExpertState(case)

    async def play(self, state: ExpertState, dialogue: DialogueSoFar, ask: Ask) -> Move:
        """This turn's calls (:meth:`turn_calls`), each rendered with the dialogue's values and
        those the dialogue added (the opening's reply, under ``opening_value``)."""
        values: dict[str, object] = {**dialogue.values(), **state.values}
        move: Move | None = None
        for step in self.turn_calls(first=not state.opened, forced=dialogue.must_advise):
            if isinstance(step, Gate):
                ready = await ask.ready(step, values)
                move = await ask.move(step.advise if ready else step.ask, values)
            elif step.reply == "text":
                reply = await ask.text(step, values)
                state.values[self.opening_value] = reply
                values[self.opening_value] = reply
            else:
                move = await ask.move(step, values)
        state.opened = True
        if move is None:
            raise LLMConfigError(f"expert strategy {self.name!r}: a turn made no move")
        return move

    def turn_calls(self, *, first: bool, forced: bool) -> tuple[Call | Gate, ...]:
        """The calls of one turn, in order; a :class:`Gate` stands for its confidence call
        followed by its ``advise`` call (ready) or its ``ask`` call (not ready)."""
        out: list[Call | Gate] = []
        if first and self.opening is not None:
            out.append(self.opening)
        if forced:
            out.append(self.forced)
        elif self.gate is not None:
            out.append(self.gate)
        elif self.turn is not None:
            out.append(self.turn)
        return tuple(out)


@dataclass
class ClientState:
    """One dialogue's state, created by :meth:`ClientStrategy.start`: the case and the template
    values the dialogue adds to every answer call (none for the paper's strategies)."""

    case: Case
    values: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientStrategy(ClientProgram):
    """A client strategy: one ``answer`` call per question (:attr:`call`), rendered from
    ``templates``."""

    name: str
    templates: Mapping[str, str]
    #: the one call answering a question
    call: Call = Call("answer", "answer", "answer")

    def __post_init__(self) -> None:
        if self.call.template not in self.templates:
            raise LLMConfigError(
                f"client strategy {self.name!r}: its answer call names template key "
                f"{self.call.template!r}, which its templates do not map"
            )

    def start(self, case: Case) -> ClientState:
        """The state of a new dialogue about ``case``."""
        return ClientState(case)

    def question_calls(self) -> tuple[Call, ...]:
        """The calls answering one question."""
        return (self.call,)

    async def answer(self, state: ClientState, dialogue: DialogueSoFar, ask: ClientAsk) -> str:
        """One ``answer`` call: the case's facts, the dialogue before the question, the
        question, and the values the dialogue added."""
        values = {**dialogue.answer_values(state.case), **state.values}
        return await ask.answer(self.call, values)
