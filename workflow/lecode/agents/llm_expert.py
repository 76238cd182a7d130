"""LLM experts: every expert strategy (:mod:`lecode.strategies`) is played here: the strategy
makes its calls through :class:`ModelAsk`, which sends them to the model, reads the replies
(the strategy's reply format; its confidence gates) and re-asks malformed ones.

:meth:`LLMExpert.start` creates one dialogue (:class:`LLMExpertDialogue`) holding the state the
strategy's ``start(case)`` made; the consultation loop asks it for each move. Every call names
its dialogue in headers (:func:`~lecode.agents.llm_common.dialogue_headers`). Every strategy
asks at most ``max_turns`` questions (the loop then sets ``must_advise`` and the strategy's
forced-advice call is made). A malformed reply is re-asked once; a second malformed reply
raises :class:`RoleError` (the dialogue stops with ``parse_error``).

A call with a ``closing`` section (few-shot) renders its template with that section in the
template's ``${closing}`` placeholder, so the forced advice shows the demonstrations too.

Replies without a marker (marked strategies only): domain models often answer without
``提问:``/``建议:``. The model entry's ``unmarked`` policy decides: ``reask`` (default) re-asks
once, then takes the reply as advice; ``advice`` / ``question`` take it as that at once. Where
the call itself fixes the kind (forced advice, MediQ's ask and advise calls) an unmarked reply
is taken as that kind (after one re-ask under ``reask``). Each branch taken is counted in the
dialogue's expert usage (``unmarked_reasks``, ``unmarked_advice``, ``unmarked_questions``), and
unreadable confidence replies in ``confidence_failures``.

Where the marker stands: chat models often open with a short phrase (``好的，我了解了。``)
before ``提问:``. The model entry's ``markers`` (:class:`lecode.config.models.Markers`) say
how a reply is read (``strict``, after a short ``preamble`` (default), or ``anywhere``) and
what a reply holding both a question and advice is (``two_moves``); the preamble stays in the
stored raw reply and is part of neither the question nor the advice. Each reading other than
a leading marker is counted (``read_after_preamble``, ``read_anywhere``, ``read_two_moves``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, get_args

from lecode.agents.base import ExpertMove, UsageMeter
from lecode.agents.llm_common import LLMRole, Messages, dialogue_headers
from lecode.config.models import Markers
from lecode.llm.endpoint import Endpoint
from lecode.llm.errors import LLMConfigError
from lecode.llm.parsing import (
    ParsedMove,
    ReplyFormatError,
    UnmarkedReply,
    parse_confidence,
    parse_json_reply,
    parse_yes_no,
    read_marked_reply,
)
from lecode.llm.templates import PromptTemplate
from lecode.records import Case, RoleUsage, Turn
from lecode.strategies import expert_strategy
from lecode.strategies.calls import Call, Gate
from lecode.strategies.program import DialogueSoFar, ExpertProgram, Move, Values

T = TypeVar("T")
Unmarked = Literal["reask", "advice", "question"]
UNMARKED_POLICIES: tuple[str, ...] = get_args(Unmarked)
DEFAULT_UNMARKED: Unmarked = "reask"


def unmarked_policy(value: object) -> Unmarked:
    """A model entry's ``unmarked`` value, validated (``None`` means the default)."""
    if value is None:
        return DEFAULT_UNMARKED
    if value not in UNMARKED_POLICIES:
        raise LLMConfigError(f"unmarked={value!r}: choose one of {', '.join(UNMARKED_POLICIES)}")
    return value  # type: ignore[return-value]


Expect = Literal["any", "question", "advice"]
#: The move a reply kind requires (``any``: a question or advice).
_EXPECT: dict[str, Expect] = {"move": "any", "question": "question", "advice": "advice"}


class LLMExpert(LLMRole):
    """An LLM playing expert strategy ``strategy`` (its declaration decides every call)."""

    role = "expert"

    def __init__(
        self,
        name: str,
        llm: Endpoint,
        templates: dict[str, PromptTemplate],
        *,
        strategy: str,
        max_turns: int = 10,
        replicate: int = 0,
        threshold: float = 0.8,
        unmarked: str | None = None,
        markers: Markers | None = None,
    ) -> None:
        """``templates``: the strategy's templates by key; ``unmarked``: the model entry's
        policy; ``None`` reads ``llm.spec.unmarked`` when the spec has one, else ``reask``;
        ``markers``: how marked replies are read (the model entry's ``markers``)."""
        self.declaration: ExpertProgram = expert_strategy(strategy)
        super().__init__(name, llm, templates, strategy=strategy, replicate=replicate)
        self.max_turns = max_turns
        self.threshold = threshold
        self.json_replies = self.declaration.reply_format == "json"
        self.unmarked = unmarked_policy(
            unmarked if unmarked is not None else getattr(llm.spec, "unmarked", None)
        )
        self.markers = markers if markers is not None else Markers()

    def start(self, case: Case) -> LLMExpertDialogue:
        return LLMExpertDialogue(self, case, self.declaration.start(case))

    def describe(self) -> dict[str, str]:
        out = super().describe()
        out["max_turns"] = str(self.max_turns)
        if getattr(self.declaration, "scored", False):
            out["threshold"] = str(self.threshold)
        if not self.json_replies:
            out["unmarked"] = self.unmarked
            out["markers"] = f"{self.markers.reading}/{self.markers.two_moves}"
        return out


class LLMExpertDialogue:
    """One dialogue of an :class:`LLMExpert`: plays the strategy with the state its ``start``
    made, sending each call the strategy makes to the model (:class:`ModelAsk`)."""

    def __init__(self, expert: LLMExpert, case: Case, state: Any) -> None:
        self.expert = expert
        self.case = case
        self.state = state
        self.id = f"{expert.name}/{expert.strategy}/{expert.replicate}/{case.id}"

    async def next_move(
        self, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        e = self.expert
        dialogue = DialogueSoFar(tuple(history), e.max_turns, must_advise)
        meta = dialogue_headers(self.case.id, self.id, dialogue.asked)
        move = await e.declaration.play(self.state, dialogue, ModelAsk(self, meter, meta))
        if not isinstance(move, Move):
            raise LLMConfigError(
                f"expert strategy {e.strategy!r}: play returned {type(move).__name__}, not a Move"
            )
        return ExpertMove(kind=move.kind, text=move.text)


class ModelAsk:
    """The ``ask`` of one turn of an LLM expert's dialogue: each call goes to the model,
    metered in ``meter``, with the dialogue's headers ``meta``."""

    def __init__(
        self, dialogue: LLMExpertDialogue, meter: UsageMeter, meta: Mapping[str, str]
    ) -> None:
        self.expert = dialogue.expert
        self.meter = meter
        self.meta = meta

    async def text(self, call: Call, values: Values) -> str:
        return await self._text(call, values, self.meter)

    async def move(self, call: Call, values: Values) -> Move:
        if call.reply not in _EXPECT:
            raise LLMConfigError(
                f"expert strategy {self.expert.strategy!r}: call {call.purpose!r} replies "
                f"{call.reply!r}; a move call replies move, question or advice"
            )
        parsed = await self._move(call, values, self.meter)
        return Move(parsed.kind, parsed.text)

    async def ready(self, gate: Gate, values: Values) -> bool:
        return await self._confident(gate, values, self.meter)

    def _prompt(self, call: Call, values: Values) -> tuple[PromptTemplate, Messages]:
        """The template and messages of ``call``."""
        template = self.expert.templates.get(call.template)
        if template is None:
            raise LLMConfigError(
                f"expert strategy {self.expert.strategy!r}: call {call.purpose!r} names "
                f"template key {call.template!r}, which its templates do not map"
            )
        if call.closing is not None:
            closing = template.section(call.closing, **values)
            return template, template.render(**values, closing=closing)
        return template, template.render(**values)

    def _unmarked_kind(self, expect: Expect, attempt: int) -> Literal["question", "advice"] | None:
        """How an unmarked reply is taken on ``attempt`` (0 = first reply); ``None``: re-ask."""
        if self.expert.unmarked == "reask" and attempt == 0:
            return None
        if expect != "any":
            return expect
        return "question" if self.expert.unmarked == "question" else "advice"

    async def _text(self, call: Call, values: Values, meter: UsageMeter) -> str:
        """A private free-text call (an opening plan): its reply, stripped."""
        e = self.expert
        template, messages = self._prompt(call, values)
        reply = await e.call(
            call.purpose, template.sha256, messages, meter, reply_kind=call.reply, meta=self.meta
        )
        return reply.strip()

    async def _move(self, call: Call, values: Values, meter: UsageMeter) -> ParsedMove:
        e = self.expert
        expect = _EXPECT[call.reply]
        template, messages = self._prompt(call, values)
        reask = e.templates[e.declaration.reask]
        attempts = 0
        # a call that fixes the kind takes that kind's part of a reply holding both
        two_moves = e.markers.two_moves if expect == "any" else expect

        def read(reply: str) -> tuple[ParsedMove, RoleUsage | None]:
            if e.json_replies:
                return parse_json_reply(reply), None
            found = read_marked_reply(reply, reading=e.markers.reading, two_moves=two_moves)
            counted = RoleUsage(
                read_after_preamble=int(found.how == "preamble"),
                read_anywhere=int(found.how == "anywhere"),
                read_two_moves=int(bool(found.two_moves)),
            )
            return found.move, counted if counted != RoleUsage() else None

        def parse(reply: str) -> ParsedMove:
            nonlocal attempts
            attempt, attempts = attempts, attempts + 1
            counted: RoleUsage | None = None
            try:
                move, counted = read(reply)
            except UnmarkedReply:
                kind = self._unmarked_kind(expect, attempt)
                if kind is None:
                    meter.add(e.role, RoleUsage(unmarked_reasks=1))
                    raise
                if kind == "advice":
                    meter.add(e.role, RoleUsage(unmarked_advice=1))
                else:
                    meter.add(e.role, RoleUsage(unmarked_questions=1))
                move = ParsedMove(kind, reply.strip())
            if expect == "advice" and move.kind != "advice":
                raise ReplyFormatError("a question where advice is required")
            if expect == "question" and move.kind != "question":
                raise ReplyFormatError("advice where a question is required")
            if counted is not None:
                meter.add(e.role, counted)
            return move

        return await self._ask(
            call, template, messages, parse, meter, reask, expect, json_mode=e.json_replies
        )

    async def _confident(self, gate: Gate, values: Values, meter: UsageMeter) -> bool:
        e = self.expert
        template, messages = self._prompt(gate.call, values)
        reask = e.templates[gate.reask]
        scored = gate.call.reply == "score"

        def parse(reply: str) -> bool:
            try:
                if scored:
                    return parse_confidence(reply) >= e.threshold
                return parse_yes_no(reply)
            except ReplyFormatError:
                meter.add(e.role, RoleUsage(confidence_failures=1))
                raise

        return await self._ask(
            gate.call, template, messages, parse, meter, reask, gate.reask_section
        )

    async def _ask(
        self,
        call: Call,
        template: PromptTemplate,
        messages: Messages,
        parse: Callable[[str], T],
        meter: UsageMeter,
        reask: PromptTemplate,
        section: str,
        *,
        json_mode: bool = False,
    ) -> T:
        """``call``'s parsed reply, re-asked once with the instruction ``section`` of ``reask``."""
        return await self.expert.ask_parsed(
            call.purpose,
            template,
            messages,
            parse,
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(instruction=reask.section(section)),
            max_reasks=1,
            json_mode=json_mode,
            reply_kind=call.reply,
            meta=self.meta,
        )
