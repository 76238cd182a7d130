"""The strategy interface: a strategy is code over one dialogue's state.

An expert strategy (:class:`ExpertProgram`) is an object whose :meth:`~ExpertProgram.start`
makes the state of a new dialogue and whose :meth:`~ExpertProgram.play` makes one move: given
that state, the dialogue so far (:class:`DialogueSoFar`) and an ``ask`` capability
(:class:`Ask`), it makes any number of calls (each renders a template of the strategy with the
values the strategy chooses: the dialogue as :meth:`DialogueSoFar.values` renders it, its own
rendering, or values of its own), keeps what it likes in its state, and returns the
:class:`Move`. Only the move reaches the client; every other reply stays private.

A client strategy (:class:`ClientProgram`) answers one question the same way
(:class:`ClientAsk`).

Whoever holds ``ask`` decides what a call costs: the LLM roles send it to a model
(:mod:`lecode.agents.llm_expert`, :mod:`lecode.agents.llm_client_sim`), the forecast counts
it (:mod:`lecode.strategies.counting`). The declarative strategies
(:mod:`lecode.strategies.declarations`) are programs too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from lecode.llm.render import answer_values, count_questions, turn_values
from lecode.records import Case, Turn
from lecode.strategies.calls import Call, Gate

MoveKind = Literal["question", "advice", "abstain"]
ReplyFormat = Literal["marked", "json"]
Values = Mapping[str, object]


@dataclass(frozen=True)
class Move:
    """An expert's move: ask ``text``, advise ``text``, or abstain (end without advice)."""

    kind: MoveKind
    text: str


@dataclass(frozen=True)
class DialogueSoFar:
    """The dialogue so far as a strategy sees it: ``history`` (the client's initial query
    first), the question budget ``max_turns``, and ``must_advise`` (the budget is spent: the
    move must be advice). A client's ``question`` is the question it answers (the last turn of
    ``history``)."""

    history: tuple[Turn, ...]
    max_turns: int
    must_advise: bool = False
    question: str = ""

    @property
    def asked(self) -> int:
        """Clarifying questions asked so far."""
        return count_questions(self.history)

    @property
    def first(self) -> bool:
        """Whether no lawyer turn has been made yet."""
        return not any(t.speaker == "lawyer" for t in self.history)

    def values(self) -> dict[str, object]:
        """The template values of an expert call: ``dialogue`` (every turn, ``用户：`` /
        ``律师：`` lines), ``asked``, ``remaining`` and ``max_turns``."""
        return turn_values(self.history, self.max_turns)

    def answer_values(self, case: Case) -> dict[str, object]:
        """The template values of a client call: ``facts`` (``- fact`` lines), ``dialogue``
        (the turns before the question) and ``question``."""
        return answer_values(case.facts, self.history, self.question)


class Ask(Protocol):
    """What an expert strategy may call. ``values`` are the template's values (every
    placeholder of the template must be given); a call with a ``closing`` section renders that
    section into ``${closing}``."""

    async def text(self, call: Call, values: Values) -> str:
        """A private free-text reply (``call.reply == "text"``), stripped."""
        ...

    async def move(self, call: Call, values: Values) -> Move:
        """A move (``call.reply``: ``move``, ``question`` or ``advice``), re-asked once with
        the strategy's ``reask`` template when malformed."""
        ...

    async def ready(self, gate: Gate, values: Values) -> bool:
        """Whether the expert can advise now: the gate's confidence call (``yes_no``, or
        ``score`` against the model entry's threshold), re-asked once when unreadable."""
        ...


class ClientAsk(Protocol):
    """What a client strategy may call."""

    async def text(self, call: Call, values: Values) -> str:
        """A private free-text reply, stripped."""
        ...

    async def answer(self, call: Call, values: Values) -> str:
        """A client's answer (``call.reply == "answer"``), normalised."""
        ...


class ExpertProgram:
    """Base of every expert strategy. Subclasses set ``name`` (the module's file name) and
    ``templates`` (template key -> template name under ``workflow/prompts``, no suffix; what
    the strategy's identity digests and its calls may render), and implement :meth:`play`.

    ``reask``: the template key re-asking a malformed move; ``reply_format``: how moves are
    written (``marked``: 提问：/建议：; ``json``: ``{"action": ..., "content": ...}``);
    ``scored``: whether the strategy compares confidences with the model's threshold.
    """

    name: str
    templates: Mapping[str, str]
    reask: str = "reask"
    reply_format: ReplyFormat = "marked"

    @property
    def scored(self) -> bool:
        return False

    def start(self, case: Case) -> Any:
        """The state of a new dialogue about ``case`` (default: a :class:`State`)."""
        return State(case)

    async def play(self, state: Any, dialogue: DialogueSoFar, ask: Ask) -> Move:
        """The next move of the dialogue whose state is ``state``."""
        raise NotImplementedError


class ClientProgram:
    """Base of every client strategy: ``name``, ``templates`` and :meth:`answer`."""

    name: str
    templates: Mapping[str, str]

    def start(self, case: Case) -> Any:
        """The state of a new dialogue about ``case`` (default: a :class:`State`)."""
        return State(case)

    async def answer(self, state: Any, dialogue: DialogueSoFar, ask: ClientAsk) -> str:
        """The answer to ``dialogue.question``."""
        raise NotImplementedError


@dataclass
class State:
    """A dialogue's state for strategies that need no more: the case and template values the
    dialogue added."""

    case: Case
    values: dict[str, str] = field(default_factory=dict)
