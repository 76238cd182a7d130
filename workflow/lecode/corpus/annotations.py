"""The records of the annotation steps, one JSON object per dialogue and step.

``RoleAnnotation`` (role identification), ``Stage1Annotation`` (the standardised dialogue with
one intent number per utterance, appendix E.1) and ``Stage2Annotation`` (initial query, atomic
key facts in dialogue order with importance 1-3, advice summary, appendix E.2). ``annotator``
names who produced the record: ``rules`` (the offline annotator), a model entry, or a human
reviewer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lecode.recordio import atomic_write_text
from lecode.records import INTENT_LABELS, Speaker

CLIENT_INTENTS = frozenset({1, 2, 3, 4})
LAWYER_INTENTS = frozenset({5, 6, 7, 8})
#: The speaker names of the LeCoDe schema.
SPEAKER_ZH: dict[Speaker, str] = {"client": "用户", "lawyer": "律师"}
ZH_SPEAKER: dict[str, Speaker] = {
    "用户": "client",
    "client": "client",
    "user": "client",
    "律师": "lawyer",
    "lawyer": "lawyer",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleAnnotation(_Model):
    id: str
    annotator: str
    roles: dict[str, Speaker]
    #: the raw turns with their roles: [speaker label, role, text]
    turns: tuple[tuple[str, Speaker, str], ...]
    #: 0..1: how clearly the lawyer stands out (1: confirmed by a person or unambiguous)
    confidence: float = 1.0
    #: why the roles need a person's check before stage 1 (empty: none)
    flags: tuple[str, ...] = ()
    #: the transcript file
    source: str = ""
    #: who confirmed the roles in <review_dir>/roles.csv (None: nobody)
    confirmed_by: str | None = None


class AnnotatedUtterance(_Model):
    speaker: Speaker
    text: str = Field(min_length=1)
    intent: int

    @model_validator(mode="after")
    def _intent_fits_speaker(self) -> AnnotatedUtterance:
        if self.intent not in INTENT_LABELS:
            raise ValueError(f"intent must be 1..10, got {self.intent}")
        wrong = LAWYER_INTENTS if self.speaker == "client" else CLIENT_INTENTS
        if self.intent in wrong:
            raise ValueError(
                f"intent {self.intent} ({INTENT_LABELS[self.intent]}) is not a "
                f"{self.speaker} intent"
            )
        return self


class Stage1Annotation(_Model):
    id: str
    annotator: str
    dialogue: tuple[AnnotatedUtterance, ...] = Field(min_length=1)
    #: standardisation edits made (jargon converted, greetings dropped, turns merged...)
    edits: tuple[str, ...] = ()
    #: what a person should check (doubtful roles, advice that standardisation would delete)
    flags: tuple[str, ...] = ()


class KeyFact(_Model):
    text: str = Field(min_length=1)
    importance: Literal[1, 2, 3]


class Stage2Annotation(_Model):
    id: str
    annotator: str
    initial_query: str = Field(min_length=1)
    facts: tuple[KeyFact, ...] = Field(min_length=1)
    suggestion: str = Field(min_length=1)
    case_type: tuple[str, ...] = ()
    charge_type: tuple[str, ...] = ()

    @field_validator("initial_query", "suggestion")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("empty")
        return v.strip()


M = TypeVar("M", bound=_Model)


def write_records(path: str | Path, records: Iterable[_Model]) -> None:
    text = "".join(r.model_dump_json() + "\n" for r in records)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(path), text)


def read_records(path: str | Path, cls: type[M]) -> list[M]:
    out: list[M] = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(cls.model_validate(json.loads(line)))
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: not a {cls.__name__}: {exc}") from None
    return out


def by_id(records: Sequence[M]) -> dict[str, M]:
    return {r.id: r for r in records}  # type: ignore[attr-defined]
