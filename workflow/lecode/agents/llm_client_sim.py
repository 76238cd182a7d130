"""LLM client simulator (paper appendix C): answers a lawyer's question from the case's atomic
facts (never their importance), at most three facts per reply, exactly 不知道 when the facts do
not answer, and declines 'tell me everything' requests. The client strategies live in
:mod:`lecode.strategies` (``strategies/client/``); each plays its calls through
:class:`ModelClientAsk`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.llm_common import LLMRole, dialogue_headers
from lecode.llm.errors import LLMConfigError
from lecode.llm.parsing import ReplyFormatError, normalize_client_answer
from lecode.llm.render import count_questions
from lecode.llm.templates import PromptTemplate
from lecode.records import Case, Turn
from lecode.strategies import client_strategy
from lecode.strategies.calls import Call
from lecode.strategies.program import ClientProgram, DialogueSoFar, Values


class LLMSimulatedClient(LLMRole):
    """Plays its client strategy; :meth:`start` begins one dialogue."""

    role = "client"

    @cached_property
    def declaration(self) -> ClientProgram:
        return client_strategy(self.strategy)

    def start(self, case: Case) -> LLMClientDialogue:
        return LLMClientDialogue(self, case, self.declaration.start(case))


class LLMClientDialogue:
    """One dialogue of an :class:`LLMSimulatedClient`: answers each question by playing the
    strategy with the state its ``start`` gave the dialogue."""

    def __init__(self, client: LLMSimulatedClient, case: Case, state: Any) -> None:
        self.client = client
        self.case = case
        self.state = state
        self.id = f"{client.name}/{client.strategy}/{client.replicate}/{case.id}"

    async def answer(self, history: Sequence[Turn], question: str, *, meter: UsageMeter) -> str:
        c = self.client
        dialogue = DialogueSoFar(tuple(history), 0, question=question)
        turn = count_questions(history)
        meta = dialogue_headers(self.case.id, self.id, turn, question)
        answer = await c.declaration.answer(self.state, dialogue, ModelClientAsk(c, meter, meta))
        if not isinstance(answer, str):
            raise LLMConfigError(
                f"client strategy {c.strategy!r}: answer returned {type(answer).__name__}, "
                "not a str"
            )
        return answer


class ModelClientAsk:
    """The ``ask`` of one answer of an LLM client: each call goes to the model."""

    def __init__(self, client: LLMSimulatedClient, meter: UsageMeter, meta: Mapping[str, str]):
        self.client = client
        self.meter = meter
        self.meta = meta

    def _template(self, call: Call) -> PromptTemplate:
        template = self.client.templates.get(call.template)
        if template is None:
            raise LLMConfigError(
                f"client strategy {self.client.strategy!r}: call {call.purpose!r} names "
                f"template key {call.template!r}, which its templates do not map"
            )
        return template

    async def _reply(self, call: Call, values: Values) -> str:
        template = self._template(call)
        return await self.client.call(
            call.purpose,
            template.sha256,
            template.render(**values),
            self.meter,
            reply_kind=call.reply,
            meta=self.meta,
        )

    async def text(self, call: Call, values: Values) -> str:
        return (await self._reply(call, values)).strip()

    async def answer(self, call: Call, values: Values) -> str:
        reply = await self._reply(call, values)
        try:
            return normalize_client_answer(reply)
        except ReplyFormatError as exc:
            raise RoleError(f"client {self.client.name!r}: unusable answer: {exc}") from exc
