"""Builds the fact matcher of a model entry: the offline lexical matcher or an LLM."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lecode.agents.base import Matcher
from lecode.agents.context import (
    ConfigurationError,
    RoleContext,
    endpoint,
    offline_agent,
    templates,
    typed_entry,
)


def build_matcher(model_name: str, model_cfg: Mapping[str, Any], ctx: RoleContext) -> Matcher:
    agent = offline_agent(model_name, model_cfg)
    if agent is None:
        from lecode.agents.llm_matcher import LLMMatcher

        return LLMMatcher(
            model_name,
            endpoint(ctx, model_name, model_cfg),
            templates("matcher", "default", ctx),
        )
    if agent == "lexical":
        from lecode.agents.lexical_matcher import LexicalMatcher

        return LexicalMatcher(
            name=model_name, threshold=typed_entry(model_name, model_cfg).threshold
        )
    raise ConfigurationError(f"models.{model_name}: {agent!r} is not a matcher agent")
