"""Builds the advice judge of a model entry (always an LLM)."""

from __future__ import annotations

from lecode.agents.base import Judge
from lecode.agents.context import ConfigurationError, RoleContext, endpoint, templates
from lecode.config.models import ModelEntry


def build_judge(
    model_name: str, entry: ModelEntry, ctx: RoleContext, *, replicate: int = 0
) -> Judge:
    """``replicate`` > 0: an independent judging run (seed + replicate, its own cache keys)."""
    if not entry.is_llm:
        raise ConfigurationError(f"models.{model_name}: no offline judge exists; use an LLM")
    from lecode.agents.llm_judge import LLMJudge

    return LLMJudge(
        model_name,
        endpoint(ctx, model_name, entry),
        templates("judge", "default", ctx),
        replicate=replicate,
    )
