"""The prompt templates a role reads when it plays a strategy: the expert's and the client's
come from their strategy's declaration (:mod:`lecode.strategies`), the matcher's and the
judge's are fixed (:data:`lecode.llm.templates.SCORING_TEMPLATES`)."""

from __future__ import annotations

from pathlib import Path

from lecode import strategies
from lecode.llm.errors import LLMConfigError
from lecode.llm.templates import PROMPTS_DIR, SCORING_TEMPLATES, PromptTemplate, load_template


def strategy_templates(role: str, strategy: str) -> dict[str, str]:
    """template key -> template name for ``role`` played with ``strategy`` (the matcher and
    judge have one strategy each, whatever ``strategy`` says)."""
    if role in SCORING_TEMPLATES:
        return dict(SCORING_TEMPLATES[role])
    if role not in strategies.ROLES:
        known = sorted([*strategies.ROLES, *SCORING_TEMPLATES])
        raise LLMConfigError(f"unknown LLM role {role!r}; known: {known}")
    return dict(strategies.get(role, strategy).templates)


def load_strategy(role: str, strategy: str) -> dict[str, PromptTemplate]:
    return {
        purpose: load_template(name) for purpose, name in strategy_templates(role, strategy).items()
    }


def template_paths(role: str, strategy: str) -> list[Path]:
    """The template files ``role``/``strategy`` reads, sorted and without duplicates."""
    base = PROMPTS_DIR.resolve()
    names = sorted(set(strategy_templates(role, strategy).values()))
    return [base / f"{n}.txt" for n in names]
