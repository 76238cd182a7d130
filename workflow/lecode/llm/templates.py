"""Prompt templates: files under ``workflow/prompts/<role>/<name>.txt``.

A template file has a ``[system]`` section (optional) and a ``[user]`` section, each starting
on a line of its own, and optionally further named sections (``[advice]``...) that a role
splices into the user text; placeholders are ``${name}`` (:class:`string.Template`, every
placeholder must be given). A template's identity is the SHA-256 of its file bytes; it enters
the cache key of every request rendered from it and the provenance of every role.

Which templates an expert or client strategy uses is declared by the strategy
(:mod:`lecode.strategies`); the matcher's and judge's are :data:`SCORING_TEMPLATES`.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lecode.llm.errors import LLMConfigError
from lecode.paths import PROMPTS_DIR

#: The scoring roles' templates (one strategy each); expert and client strategies declare
#: theirs in :mod:`lecode.strategies`.
SCORING_TEMPLATES: dict[str, dict[str, str]] = {
    "matcher": {"match": "matcher/match_facts", "reask": "matcher/reask"},
    "judge": {"judge": "judge/advice_quality", "reask": "judge/reask"},
}

_SECTION = re.compile(r"^\[([a-z_]+)\]$")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    path: Path
    system: str | None
    user: str
    sha256: str
    extra: tuple[tuple[str, str], ...] = ()

    def section(self, name: str, **values: object) -> str:
        for key, text in self.extra:
            if key == name:
                return _substitute(text, self.name, values)
        raise LLMConfigError(f"prompt template {self.name}: no [{name}] section")

    @property
    def short_hash(self) -> str:
        return self.sha256[:16]

    def render_user(self, **values: object) -> str:
        return _substitute(self.user, self.name, values)

    def render(self, **values: object) -> list[dict[str, str]]:
        messages: list[dict[str, str]] = []
        if self.system is not None:
            messages.append(
                {"role": "system", "content": _substitute(self.system, self.name, values)}
            )
        messages.append({"role": "user", "content": self.render_user(**values)})
        return messages


def _substitute(text: str, name: str, values: dict[str, object]) -> str:
    try:
        return string.Template(text).substitute({k: str(v) for k, v in values.items()})
    except (KeyError, ValueError) as exc:
        raise LLMConfigError(f"prompt template {name}: placeholder problem: {exc}") from exc


def parse_template(name: str, path: Path, raw: bytes) -> PromptTemplate:
    text = raw.decode("utf-8")
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        header = _SECTION.match(line.strip())
        if header is not None:
            current = header.group(1)
            if current in sections:
                raise LLMConfigError(f"prompt template {path}: section {current} appears twice")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip():
            raise LLMConfigError(f"prompt template {path}: text before the first section")
    if "user" not in sections:
        raise LLMConfigError(f"prompt template {path}: no [user] section")
    system = "\n".join(sections.pop("system")).strip() if "system" in sections else None
    user = "\n".join(sections.pop("user")).strip()
    extra = tuple((k, "\n".join(v).strip()) for k, v in sections.items())
    return PromptTemplate(name, path, system, user, hashlib.sha256(raw).hexdigest(), extra)


@lru_cache(maxsize=256)
def _load(name: str, prompts_dir: Path) -> PromptTemplate:
    path = prompts_dir / f"{name}.txt"
    if not path.is_file():
        raise LLMConfigError(f"prompt template {name!r} not found at {path}")
    return parse_template(name, path, path.read_bytes())


def load_template(name: str) -> PromptTemplate:
    return _load(name, PROMPTS_DIR.resolve())
