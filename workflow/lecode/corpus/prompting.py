"""How the annotation steps show their inputs to a model, and how those renderings are read
back (the mock endpoint plays the annotator from them).

- transcript: ``[k] 说话人1：text`` per raw turn;
- role-labelled dialogue (stage 1 input): ``[k] 用户（说话人1）：text``;
- standardised dialogue (stage 2 input): ``[k] 用户（[2] Client Response）：text``.
"""

from __future__ import annotations

import re

from lecode.corpus.annotations import (
    SPEAKER_ZH,
    ZH_SPEAKER,
    AnnotatedUtterance,
    RoleAnnotation,
    Stage1Annotation,
)
from lecode.corpus.transcripts import RawTranscript, RawTurn
from lecode.records import INTENT_LABELS

_LINE = re.compile(r"^\[(\d+)\] ([^：（]+)(?:（([^）]*)）)?：(.*)$")


def render_transcript(t: RawTranscript) -> str:
    return "\n".join(f"[{k}] {turn.speaker}：{turn.text}" for k, turn in enumerate(t.turns))


def render_roles(r: RoleAnnotation) -> str:
    return "\n".join(
        f"[{k}] {SPEAKER_ZH[role]}（{label}）：{text}"
        for k, (label, role, text) in enumerate(r.turns)
    )


def render_stage1(s: Stage1Annotation) -> str:
    return "\n".join(
        f"[{k}] {SPEAKER_ZH[u.speaker]}（[{u.intent}] {INTENT_LABELS[u.intent]}）：{u.text}"
        for k, u in enumerate(s.dialogue)
    )


def _lines(section: str) -> list[tuple[str, str, str]]:
    out = []
    for line in section.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out.append((m.group(2).strip(), (m.group(3) or "").strip(), m.group(4)))
    return out


def read_transcript(section: str, tid: str = "prompt") -> RawTranscript:
    turns = [RawTurn(speaker, text, k) for k, (speaker, _, text) in enumerate(_lines(section))]
    return RawTranscript(tid, "<prompt>", tuple(turns))


def read_roles(section: str, tid: str = "prompt") -> RoleAnnotation:
    rows = [(label, ZH_SPEAKER[role], text) for role, label, text in _lines(section)]
    return RoleAnnotation(
        id=tid,
        annotator="prompt",
        roles={label: role for label, role, _ in rows},
        turns=tuple(rows),
    )


def read_stage1(section: str, tid: str = "prompt") -> Stage1Annotation:
    dialogue = []
    for role, intent, text in _lines(section):
        m = re.match(r"\[(\d+)\]", intent)
        dialogue.append(
            AnnotatedUtterance(
                speaker=ZH_SPEAKER[role], text=text, intent=int(m.group(1)) if m else 10
            )
        )
    return Stage1Annotation(id=tid, annotator="prompt", dialogue=tuple(dialogue))
