"""Builds the fact matcher of a model entry: the offline lexical matcher or an LLM."""

from __future__ import annotations

from lecode.agents.base import Matcher
from lecode.agents.context import ConfigurationError, RoleContext, endpoint, templates
from lecode.config.models import Lexical, ModelEntry, OpenAIEntry, VLLMEntry


def build_matcher(model_name: str, entry: ModelEntry, ctx: RoleContext) -> Matcher:
    if isinstance(entry, (OpenAIEntry, VLLMEntry)):
        from lecode.agents.llm_matcher import LLMMatcher

        return LLMMatcher(
            model_name,
            endpoint(ctx, model_name, entry),
            templates("matcher", "default", ctx),
        )
    if isinstance(entry, Lexical):
        from lecode.agents.lexical_matcher import LexicalMatcher

        return LexicalMatcher(name=model_name, threshold=entry.threshold)
    raise ConfigurationError(f"models.{model_name}: {entry.agent!r} is not a matcher agent")
