"""What every LLM-backed role shares: one call through the LLM endpoint with usage metering,
re-asking after a malformed reply, and provenance (``describe``).

Reasoning models: the reasoning of a reply (inline ``<think>...</think>``, see
:func:`lecode.llm.parsing.split_reasoning`, or the API's separate ``reasoning_content``) never
reaches a parser, a transcript or a re-ask; the raw reply stays in the response store. Its
tokens are metered as ``RoleUsage.reasoning_tokens`` (reported by the API, else estimated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, TypeVar
from urllib.parse import quote

from lecode.agents.base import RoleError, UsageMeter
from lecode.llm.endpoint import Endpoint
from lecode.llm.errors import LLMCallError
from lecode.llm.ledger import reasoning_tokens
from lecode.llm.parsing import ReplyFormatError, split_reasoning
from lecode.llm.templates import PromptTemplate
from lecode.records import RoleUsage

T = TypeVar("T")
Messages = list[dict[str, str]]


def dialogue_headers(
    case_id: str, dialogue_id: str, turn: int, question: str | None = None
) -> dict[str, str]:
    """The headers naming the dialogue a call belongs to (percent-encoded UTF-8): its case,
    the dialogue's id, the questions asked so far, and for a client the question it answers.
    The mock endpoint plays the case from them, whatever the prompt shows; they never enter a
    request key."""
    out = {
        "X-Lecode-Case": quote(case_id, safe=""),
        "X-Lecode-Dialogue": quote(dialogue_id, safe=""),
        "X-Lecode-Turn": str(turn),
    }
    if question is not None:
        out["X-Lecode-Question"] = quote(question, safe="")
    return out


class LLMRole:
    """Base of the four LLM roles. ``role`` is the meter key (expert, client, matcher, judge)."""

    role: ClassVar[str] = ""

    def __init__(
        self,
        name: str,
        llm: Endpoint,
        templates: Mapping[str, PromptTemplate],
        *,
        strategy: str,
        replicate: int = 0,
    ) -> None:
        self.name = name
        self.llm = llm
        self.templates = dict(templates)
        self.strategy = strategy
        self.replicate = replicate

    async def call(
        self,
        purpose: str,
        template_hash: str,
        messages: Sequence[Mapping[str, str]],
        meter: UsageMeter,
        *,
        json_mode: bool = False,
        reask: bool = False,
        reply_kind: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> str:
        """One request; returns the reply's answer text with any reasoning removed (a reply
        without reasoning comes back unchanged) and meters the call's usage. ``reply_kind``:
        the reply the strategy declares for the call; ``meta``: which dialogue the call
        belongs to (:func:`dialogue_headers`). Both are headers, never part of the key."""
        headers = dict(meta or {})
        if reply_kind is not None:
            headers["X-Lecode-Reply"] = reply_kind
        if json_mode:
            headers["X-Lecode-Format"] = "json"
        if reask:
            headers["X-Lecode-Reask"] = "1"
        try:
            completion = await self.llm.complete(
                messages,
                role=self.role,
                purpose=purpose,
                template_hash=template_hash,
                replicate=self.replicate,
                json_mode=json_mode,
                headers=headers,
            )
        except LLMCallError as exc:
            meter.add(self.role, RoleUsage(calls=1, retries=exc.retries))
            raise
        text, inline = split_reasoning(completion.text)
        usage = completion.usage()
        if not usage.reasoning_tokens:
            # The client reports reasoning_content / reasoning_tokens where the API gives
            # them (read defensively: older clients do not); else estimate from the text.
            separate = str(getattr(completion, "reasoning", "") or "")
            reported = getattr(completion, "reasoning_tokens", None)
            n = reasoning_tokens(
                "\n".join(r for r in (separate, inline) if r),
                reported=reported if isinstance(reported, int) and reported > 0 else None,
                completion_tokens=usage.completion_tokens,
            )
            if n:
                usage = usage.model_copy(update={"reasoning_tokens": n})
        meter.add(self.role, usage)
        meter.add_served(self.role, completion.model, completion.system_fingerprint)
        return text

    async def ask_parsed(
        self,
        purpose: str,
        template: PromptTemplate,
        messages: Messages,
        parse: Callable[[str], T],
        meter: UsageMeter,
        *,
        reask: PromptTemplate | None,
        reask_text: Callable[[], str] | None = None,
        max_reasks: int = 1,
        json_mode: bool = False,
        reply_kind: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> T:
        """Call, parse; on a malformed reply show the model its reply and the re-ask text,
        up to ``max_reasks`` times; then raise :class:`RoleError` (``parse_error``)."""
        template_hash = template.sha256
        reply = await self.call(
            purpose,
            template_hash,
            messages,
            meter,
            json_mode=json_mode,
            reply_kind=reply_kind,
            meta=meta,
        )
        for attempt in range(max_reasks + 1):
            try:
                return parse(reply)
            except ReplyFormatError as exc:
                if attempt == max_reasks or reask is None or reask_text is None:
                    raise RoleError(
                        f"{self.role} {self.name!r} ({purpose}): malformed reply after "
                        f"{attempt} re-ask(s): {exc}",
                        kind="parse_error",
                    ) from exc
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": reask_text()},
                ]
                template_hash = f"{template.sha256}+{reask.sha256}"
                reply = await self.call(
                    purpose,
                    template_hash,
                    messages,
                    meter,
                    json_mode=json_mode,
                    reask=True,
                    reply_kind=reply_kind,
                    meta=meta,
                )
        raise AssertionError("unreachable")

    async def ask_json(
        self,
        purpose: str,
        template: PromptTemplate,
        messages: Messages,
        parse: Callable[[str], T],
        meter: UsageMeter,
    ) -> T:
        """A JSON reply, ``parse``d; a reply ``parse`` rejects is re-asked once with the role's
        ``reask`` template, which names the problem ``parse`` found (``{problem}``)."""
        reask = self.templates["reask"]
        problem = [""]

        def checked(reply: str) -> T:
            try:
                return parse(reply)
            except ReplyFormatError as exc:
                problem[0] = str(exc)
                raise

        return await self.ask_parsed(
            purpose,
            template,
            messages,
            checked,
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(problem=problem[0]),
            max_reasks=1,
            json_mode=True,
        )

    def describe(self) -> dict[str, str]:
        """Provenance: model identity, decoding settings, template hashes, and the model ids
        and system fingerprints the endpoint reported (when known). The caller prefixes the
        keys with the role."""
        spec = self.llm.spec
        out = {
            "model": self.name,
            "strategy": self.strategy,
            "backend": spec.backend,
            "base_url": spec.identity_url,
            "served_model": spec.served_model,
            "replicate": str(self.replicate),
        }
        if spec.adapter:
            out["adapter"] = spec.adapter  # the LoRA adapter's identity (train:, sha256:, path:)
        for field, value in spec.decoding.as_dict().items():
            out[field] = "" if value is None else str(value)
        for template in sorted(self.templates.values(), key=lambda t: t.name):
            out[f"template.{template.name}"] = template.short_hash
        if self.llm.seen_models:
            out["reported_model"] = ",".join(sorted(self.llm.seen_models))
        if self.llm.seen_fingerprints:
            out["system_fingerprint"] = ",".join(sorted(self.llm.seen_fingerprints))
        return out


class ReaskingRole(LLMRole):
    """An LLM role answering in JSON (matcher, judge): one strategy, re-asked on bad replies."""

    def __init__(
        self,
        name: str,
        llm: Endpoint,
        templates: Mapping[str, PromptTemplate],
        *,
        max_reasks: int = 2,
        replicate: int = 0,
    ) -> None:
        super().__init__(name, llm, templates, strategy="default", replicate=replicate)
        self.max_reasks = max_reasks
