"""LLM experts: zero-shot, few-shot, JSON replies, and the MediQ-style confidence gate.

Every strategy asks at most ``max_turns`` questions (the loop then sets ``must_advise`` and the
advice-only prompt is used). A malformed reply is re-asked once; a second malformed reply
raises :class:`RoleError` (the dialogue stops with ``parse_error``).

Few-shot: the demonstrations sit in the ``turn`` template's system message, and that template
also closes the forced-advice call (its ``[advise]`` section; ``[turn]`` closes a normal turn),
so every few-shot call, forced advice and re-asks included, shows the demonstrations.

Replies without a marker (marked strategies only): domain models often answer without
``提问:``/``建议:``. The model entry's ``unmarked`` policy decides: ``reask`` (default) re-asks
once, then takes the reply as advice; ``advice`` / ``question`` take it as that at once. Where
the call itself fixes the kind (forced advice, MediQ's ask and advise calls) an unmarked reply
is taken as that kind (after one re-ask under ``reask``). Each branch taken is counted in the
dialogue's expert usage (``unmarked_reasks``, ``unmarked_advice``, ``unmarked_questions``), and
unreadable MediQ confidence replies in ``confidence_failures``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from lecode.agents.base import ExpertMove, UsageMeter
from lecode.agents.llm_common import LLMRole, Messages
from lecode.llm.endpoint import Endpoint
from lecode.llm.errors import LLMConfigError
from lecode.llm.parsing import (
    ParsedMove,
    ReplyFormatError,
    UnmarkedReply,
    parse_confidence,
    parse_json_reply,
    parse_marked_reply,
    parse_yes_no,
)
from lecode.llm.render import count_questions, format_dialogue
from lecode.llm.templates import PromptTemplate
from lecode.records import Case, RoleUsage, Turn

Expect = Literal["any", "question", "advice"]
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


def _has_section(template: PromptTemplate, name: str) -> bool:
    return any(key == name for key, _ in template.extra)


class LLMExpert(LLMRole):
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
    ) -> None:
        """``unmarked``: the model entry's policy; ``None`` reads ``llm.spec.unmarked`` when the
        spec has one, else ``reask``."""
        templates = dict(templates)
        # A turn template with [turn]/[advise] closings carries the demonstrations into the
        # forced-advice call; the separate advice-only prompt is then not used.
        self.turn_advises = "turn" in templates and _has_section(templates["turn"], "advise")
        if self.turn_advises:
            templates.pop("advise", None)
        super().__init__(name, llm, templates, strategy=strategy, replicate=replicate)
        self.max_turns = max_turns
        self.threshold = threshold
        self.json_replies = strategy.endswith("_json")
        self.gated = "confidence" in templates
        self.unmarked = unmarked_policy(
            unmarked if unmarked is not None else getattr(llm.spec, "unmarked", None)
        )

    async def next_move(
        self, case: Case, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        asked = count_questions(history)
        values = {
            "dialogue": format_dialogue(history),
            "asked": asked,
            "remaining": max(0, self.max_turns - asked),
            "max_turns": self.max_turns,
        }
        if must_advise:
            move = await self._move("advise", "advice", values, meter)
        elif self.gated:
            ready = await self._confident(values, meter)
            if ready:
                move = await self._move("advise", "advice", values, meter)
            else:
                move = await self._move("ask", "question", values, meter)
        else:
            move = await self._move("turn", "any", values, meter)
        return ExpertMove(kind=move.kind, text=move.text)

    def _prompt(self, purpose: str, values: dict[str, object]) -> tuple[PromptTemplate, Messages]:
        """The template and messages of a ``purpose`` call."""
        if self.turn_advises and purpose in ("turn", "advise"):
            template = self.templates["turn"]
            closing = template.section(purpose, **values)
            return template, template.render(**values, closing=closing)
        template = self.templates[purpose]
        return template, template.render(**values)

    def _unmarked_kind(self, expect: Expect, attempt: int) -> Literal["question", "advice"] | None:
        """How an unmarked reply is taken on ``attempt`` (0 = first reply); ``None``: re-ask."""
        if self.unmarked == "reask" and attempt == 0:
            return None
        if expect != "any":
            return expect
        return "question" if self.unmarked == "question" else "advice"

    async def _move(
        self, purpose: str, expect: Expect, values: dict[str, object], meter: UsageMeter
    ) -> ParsedMove:
        template, messages = self._prompt(purpose, values)
        reask = self.templates["reask"]
        base = parse_json_reply if self.json_replies else parse_marked_reply
        attempts = 0

        def parse(reply: str) -> ParsedMove:
            nonlocal attempts
            attempt, attempts = attempts, attempts + 1
            try:
                move = base(reply)
            except UnmarkedReply:
                kind = self._unmarked_kind(expect, attempt)
                if kind is None:
                    meter.add(self.role, RoleUsage(unmarked_reasks=1))
                    raise
                if kind == "advice":
                    meter.add(self.role, RoleUsage(unmarked_advice=1))
                else:
                    meter.add(self.role, RoleUsage(unmarked_questions=1))
                move = ParsedMove(kind, reply.strip())
            if expect == "advice" and move.kind != "advice":
                raise ReplyFormatError("a question where advice is required")
            if expect == "question" and move.kind != "question":
                raise ReplyFormatError("advice where a question is required")
            return move

        def reask_text() -> str:
            return reask.render_user(instruction=reask.section(expect))

        return await self.ask_parsed(
            purpose,
            template,
            messages,
            parse,
            meter,
            reask=reask,
            reask_text=reask_text,
            max_reasks=1,
            json_mode=self.json_replies,
        )

    async def _confident(self, values: dict[str, object], meter: UsageMeter) -> bool:
        template = self.templates["confidence"]
        reask = self.templates["reask_confidence"]
        scored = self.strategy == "mediq_threshold"

        def parse(reply: str) -> bool:
            try:
                if scored:
                    return parse_confidence(reply) >= self.threshold
                return parse_yes_no(reply)
            except ReplyFormatError:
                meter.add(self.role, RoleUsage(confidence_failures=1))
                raise

        def reask_text() -> str:
            return reask.render_user(instruction=reask.section("score" if scored else "yes_no"))

        return await self.ask_parsed(
            "confidence_score" if scored else "confidence",
            template,
            template.render(**values),
            parse,
            meter,
            reask=reask,
            reask_text=reask_text,
            max_reasks=1,
        )

    def describe(self) -> dict[str, str]:
        out = super().describe()
        out["max_turns"] = str(self.max_turns)
        if self.strategy == "mediq_threshold":
            out["threshold"] = str(self.threshold)
        if not self.json_replies:
            out["unmarked"] = self.unmarked
        return out
