"""Builds the advice judge of a model entry (always an LLM)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lecode.agents.base import Judge
from lecode.agents.context import (
    ConfigurationError,
    RoleContext,
    endpoint,
    offline_agent,
    templates,
)


def build_judge(
    model_name: str, model_cfg: Mapping[str, Any], ctx: RoleContext, *, replicate: int = 0
) -> Judge:
    """``replicate`` > 0: an independent judging run (seed + replicate, its own cache keys)."""
    if offline_agent(model_name, model_cfg) is not None:
        raise ConfigurationError(f"models.{model_name}: no offline judge exists; use an LLM")
    from lecode.agents.llm_judge import LLMJudge

    return LLMJudge(
        model_name,
        endpoint(ctx, model_name, model_cfg),
        templates("judge", "default", ctx),
        replicate=replicate,
    )
