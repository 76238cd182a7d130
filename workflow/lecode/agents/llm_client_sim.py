"""LLM client simulator (paper appendix C): answers a lawyer's question from the case's atomic
facts (never their importance), at most three facts per reply, exactly 不知道 when the facts do
not answer, and declines 'tell me everything' requests. The prompt strategies are declared in
:mod:`lecode.strategies` (``strategies/client/``)."""

from __future__ import annotations

from collections.abc import Sequence

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.llm_common import LLMRole
from lecode.llm.parsing import ReplyFormatError, normalize_client_answer
from lecode.llm.render import format_dialogue, format_fact_bullets, one_line
from lecode.records import Case, Turn
from lecode.strategies import client_strategy


class LLMSimulatedClient(LLMRole):
    role = "client"

    async def answer(
        self, case: Case, history: Sequence[Turn], question: str, *, meter: UsageMeter
    ) -> str:
        shown = list(history)
        if shown and shown[-1].kind == "question" and shown[-1].text == question:
            shown = shown[:-1]  # the question is shown on its own
        call = client_strategy(self.strategy).answer
        template = self.templates[call.template]
        messages = template.render(
            facts=format_fact_bullets(case.facts),
            dialogue=format_dialogue(shown),
            question=one_line(question),
        )
        reply = await self.call(
            call.purpose, template.sha256, messages, meter, reply_kind=call.reply
        )
        try:
            return normalize_client_answer(reply)
        except ReplyFormatError as exc:
            raise RoleError(f"client {self.name!r}: unusable answer: {exc}") from exc
