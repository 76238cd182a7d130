"""Builds the simulated client of a model entry: the offline fact lookup or an LLM."""

from __future__ import annotations

from lecode.agents.base import Client
from lecode.agents.context import ConfigurationError, RoleContext, endpoint, templates
from lecode.config.models import FactLookup, ModelEntry, OpenAIEntry, VLLMEntry


def build_client(
    model_name: str,
    entry: ModelEntry,
    strategy: str,
    ctx: RoleContext,
    *,
    replicate: int = 0,
) -> Client:
    """``replicate`` > 0: an independent run of an LLM client (seed + replicate, its own cache
    keys); the offline client is deterministic and ignores it."""
    if isinstance(entry, (OpenAIEntry, VLLMEntry)):
        from lecode.agents.llm_client_sim import LLMSimulatedClient

        return LLMSimulatedClient(
            model_name,
            endpoint(ctx, model_name, entry),
            templates("client", strategy, ctx),
            strategy=strategy,
            replicate=replicate,
        )
    if isinstance(entry, FactLookup):
        from lecode.agents.fact_lookup import FactLookupClient

        return FactLookupClient(name=model_name, max_facts=entry.max_facts)
    raise ConfigurationError(f"models.{model_name}: {entry.agent!r} is not a client agent")
