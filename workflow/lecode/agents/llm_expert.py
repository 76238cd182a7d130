"""LLM experts: zero-shot, few-shot, JSON replies, and the MediQ-style confidence gate.

Every strategy asks at most ``max_turns`` questions (the loop then sets ``must_advise`` and the
advice-only prompt is used). A malformed reply is re-asked once; a second malformed reply
raises :class:`RoleError` (the dialogue stops with ``parse_error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from lecode.agents.base import ExpertMove, UsageMeter
from lecode.agents.llm_common import LLMRole
from lecode.llm.client import LLMClient
from lecode.llm.parsing import (
    ParsedMove,
    ReplyFormatError,
    parse_confidence,
    parse_json_reply,
    parse_marked_reply,
    parse_yes_no,
)
from lecode.llm.render import count_questions, format_dialogue
from lecode.llm.templates import PromptTemplate
from lecode.records import Case, Turn

Expect = Literal["any", "question", "advice"]


class LLMExpert(LLMRole):
    role = "expert"

    def __init__(
        self,
        name: str,
        llm: LLMClient,
        templates: dict[str, PromptTemplate],
        *,
        strategy: str,
        max_turns: int = 10,
        replicate: int = 0,
        threshold: float = 0.8,
    ) -> None:
        super().__init__(name, llm, templates, strategy=strategy, replicate=replicate)
        self.max_turns = max_turns
        self.threshold = threshold
        self.json_replies = strategy.endswith("_json")
        self.gated = "confidence" in templates

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

    async def _move(
        self, purpose: str, expect: Expect, values: dict[str, object], meter: UsageMeter
    ) -> ParsedMove:
        template = self.templates[purpose]
        reask = self.templates["reask"]
        base = parse_json_reply if self.json_replies else parse_marked_reply

        def parse(reply: str) -> ParsedMove:
            move = base(reply)
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
            template.render(**values),
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
            if scored:
                return parse_confidence(reply) >= self.threshold
            return parse_yes_no(reply)

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
        return out
