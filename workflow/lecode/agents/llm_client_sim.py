"""LLM client simulator (paper appendix C): answers a lawyer's question from the case's atomic
facts (never their importance), at most three facts per reply, exactly 不知道 when the facts do
not answer, and declines 'tell me everything' requests. The prompt strategies are declared in
:mod:`lecode.strategies` (``strategies/client/``)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.llm_common import LLMRole
from lecode.llm.parsing import ReplyFormatError, normalize_client_answer
from lecode.llm.render import format_dialogue, format_fact_bullets, one_line
from lecode.records import Case, Turn
from lecode.strategies import client_strategy
from lecode.strategies.declarations import ClientState, ClientStrategy


class LLMSimulatedClient(LLMRole):
    """Plays its client strategy's declaration; :meth:`start` begins one dialogue."""

    role = "client"

    @cached_property
    def declaration(self) -> ClientStrategy:
        return client_strategy(self.strategy)

    def start(self, case: Case) -> LLMClientDialogue:
        return LLMClientDialogue(self, self.declaration.start(case))


class LLMClientDialogue:
    """One dialogue of an :class:`LLMSimulatedClient`: answers each question with the
    strategy's call, rendered with the values its ``start`` gave the dialogue."""

    def __init__(self, client: LLMSimulatedClient, state: ClientState) -> None:
        self.client = client
        self.state = state

    async def answer(self, history: Sequence[Turn], question: str, *, meter: UsageMeter) -> str:
        c, state = self.client, self.state
        shown = list(history)
        if shown and shown[-1].kind == "question" and shown[-1].text == question:
            shown = shown[:-1]  # the question is shown on its own
        call = c.declaration.answer
        template = c.templates[call.template]
        messages = template.render(
            facts=format_fact_bullets(state.case.facts),
            dialogue=format_dialogue(shown),
            question=one_line(question),
            **state.values,
        )
        reply = await c.call(call.purpose, template.sha256, messages, meter, reply_kind=call.reply)
        try:
            return normalize_client_answer(reply)
        except ReplyFormatError as exc:
            raise RoleError(f"client {c.name!r}: unusable answer: {exc}") from exc
