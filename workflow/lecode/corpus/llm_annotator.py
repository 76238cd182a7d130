"""The annotation steps played by a model entry (the paper used Qwen-max for roles and the
preliminary key facts), with our own prompts ``workflow/prompts/annotate/*.txt``.

Every reply is JSON; a malformed one is re-asked once with the problem named, then the
dialogue fails with :class:`~lecode.agents.base.RoleError`. Requests go through the response
store (:mod:`lecode.llm.store`), so a rebuild, or ``LECODE_REPLAY=1``, answers from it.
"""

from __future__ import annotations

from typing import Any

from lecode.agents.base import UsageMeter
from lecode.agents.llm_common import LLMRole
from lecode.corpus.annotations import (
    ZH_SPEAKER,
    AnnotatedUtterance,
    KeyFact,
    RoleAnnotation,
    Stage1Annotation,
    Stage2Annotation,
)
from lecode.corpus.prompting import render_roles, render_stage1, render_transcript
from lecode.corpus.transcripts import RawTranscript
from lecode.llm.parsing import ReplyFormatError, _as_int, load_structured
from lecode.llm.templates import PromptTemplate, load_template

#: Prompt templates of the LLM annotator, by purpose.
ANNOTATOR_TEMPLATES = {
    "roles": "annotate/roles",
    "stage1": "annotate/stage1",
    "stage2": "annotate/stage2",
    "reask": "annotate/reask",
}


def annotator_templates() -> dict[str, PromptTemplate]:
    return {purpose: load_template(name) for purpose, name in ANNOTATOR_TEMPLATES.items()}


def _object(reply: str, key: str) -> dict[str, Any]:
    data = load_structured(reply)
    if not isinstance(data, dict) or key not in data:
        raise ReplyFormatError(f'expected a JSON object with "{key}"')
    return data


def _entries(data: dict[str, Any], key: str, text: str, shape: str) -> list[dict[str, Any]]:
    """The non-empty list ``data[key]``, each item an object with a string ``text``."""
    items = data[key]
    if not isinstance(items, list) or not items:
        raise ReplyFormatError(f'"{key}" must be a non-empty list')
    for k, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get(text), str):
            raise ReplyFormatError(f"{key}[{k}] must be {{{shape}}}")
    return items


def _speaker(value: Any, where: str) -> Any:
    role = ZH_SPEAKER.get(str(value).strip().lower()) or ZH_SPEAKER.get(str(value).strip())
    if role is None:
        raise ReplyFormatError(f"{where}: speaker must be 用户 or 律师, got {value!r}")
    return role


def parse_roles(reply: str, t: RawTranscript, annotator: str) -> RoleAnnotation:
    roles_raw = _object(reply, "roles")["roles"]
    if not isinstance(roles_raw, dict):
        raise ReplyFormatError('"roles" must map speaker labels to 用户/律师')
    missing = [s for s in t.speakers if s not in roles_raw]
    if missing:
        raise ReplyFormatError(f"no role for {missing}")
    roles = {s: _speaker(roles_raw[s], f"roles.{s}") for s in t.speakers}
    if "lawyer" not in roles.values() or "client" not in roles.values():
        raise ReplyFormatError("a consultation needs one 用户 and one 律师")
    turns = tuple((x.speaker, roles[x.speaker], x.text) for x in t.turns)
    return RoleAnnotation(id=t.id, annotator=annotator, roles=roles, turns=turns)


def parse_stage1(reply: str, tid: str, annotator: str) -> Stage1Annotation:
    data = _object(reply, "dialogue")
    out = []
    for k, item in enumerate(_entries(data, "dialogue", "text", "speaker, text, intent")):
        try:
            out.append(
                AnnotatedUtterance(
                    speaker=_speaker(item.get("speaker"), f"dialogue[{k}]"),
                    text=item["text"].strip(),
                    intent=_as_int(item.get("intent")),
                )
            )
        except ValueError as exc:
            raise ReplyFormatError(f"dialogue[{k}]: {exc}") from None
    if out[0].speaker != "client" or out[-1].speaker != "lawyer":
        raise ReplyFormatError("the dialogue must start with 用户 and end with 律师")
    edits = data.get("edits") or []
    return Stage1Annotation(
        id=tid, annotator=annotator, dialogue=tuple(out), edits=tuple(str(e) for e in edits)
    )


def parse_stage2(reply: str, tid: str, annotator: str) -> Stage2Annotation:
    data = _object(reply, "facts")
    facts = []
    for k, item in enumerate(_entries(data, "facts", "fact", "fact, importance")):
        weight = _as_int(item.get("importance"))
        if weight not in (1, 2, 3):
            raise ReplyFormatError(f"facts[{k}].importance must be 1, 2 or 3")
        facts.append(KeyFact(text=item["fact"].strip(), importance=weight))
    query, suggestion = data.get("initial_query"), data.get("suggestion")
    if not isinstance(query, str) or not query.strip():
        raise ReplyFormatError('"initial_query" is missing or empty')
    if not isinstance(suggestion, str) or not suggestion.strip():
        raise ReplyFormatError('"suggestion" is missing or empty')
    types = data.get("case_type") or []
    return Stage2Annotation(
        id=tid,
        annotator=annotator,
        initial_query=query,
        facts=tuple(facts),
        suggestion=suggestion,
        case_type=tuple(str(x) for x in (types if isinstance(types, list) else [types])),
    )


class LLMAnnotator(LLMRole):
    """A model entry playing the three pre-annotation steps."""

    role = "annotator"

    def __init__(self, name: str, llm: Any, templates: dict[str, PromptTemplate]) -> None:
        super().__init__(name, llm, templates, strategy="annotate")

    async def _ask(
        self, purpose: str, messages: list[dict[str, str]], parse: Any, meter: UsageMeter
    ) -> Any:
        return await self.ask_json(purpose, self.templates[purpose], messages, parse, meter)

    async def roles(self, t: RawTranscript, meter: UsageMeter) -> RoleAnnotation:
        messages = self.templates["roles"].render(
            transcript=render_transcript(t), speakers="、".join(t.speakers)
        )
        return await self._ask("roles", messages, lambda r: parse_roles(r, t, self.name), meter)

    async def stage1(self, r: RoleAnnotation, meter: UsageMeter) -> Stage1Annotation:
        messages = self.templates["stage1"].render(dialogue=render_roles(r))
        return await self._ask(
            "stage1", messages, lambda x: parse_stage1(x, r.id, self.name), meter
        )

    async def stage2(self, s: Stage1Annotation, meter: UsageMeter) -> Stage2Annotation:
        messages = self.templates["stage2"].render(dialogue=render_stage1(s))
        return await self._ask(
            "stage2", messages, lambda x: parse_stage2(x, s.id, self.name), meter
        )
