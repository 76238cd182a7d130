"""Builds the simulated client of a model entry: the offline fact lookup or an LLM."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lecode.agents.base import Client
from lecode.agents.context import (
    ConfigurationError,
    RoleContext,
    endpoint,
    offline_agent,
    templates,
    typed_entry,
)


def build_client(
    model_name: str,
    model_cfg: Mapping[str, Any],
    strategy: str,
    ctx: RoleContext,
    *,
    replicate: int = 0,
) -> Client:
    """``replicate`` > 0: an independent run of an LLM client (seed + replicate, its own cache
    keys); the offline client is deterministic and ignores it."""
    agent = offline_agent(model_name, model_cfg)
    if agent is None:
        from lecode.agents.llm_client_sim import LLMSimulatedClient

        return LLMSimulatedClient(
            model_name,
            endpoint(ctx, model_name, model_cfg),
            templates("client", strategy, ctx),
            strategy=strategy,
            replicate=replicate,
        )
    if agent == "fact_lookup":
        from lecode.agents.fact_lookup import FactLookupClient

        return FactLookupClient(
            name=model_name, max_facts=typed_entry(model_name, model_cfg).max_facts
        )
    raise ConfigurationError(f"models.{model_name}: {agent!r} is not a client agent")
