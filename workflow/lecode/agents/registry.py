"""Builds role implementations from the named model entries of ``params.yaml``.

``backend: offline`` selects a built-in deterministic agent by its ``agent`` key; any LLM backend
(``openai``, ``vllm``) builds an LLM-backed role around one OpenAI-compatible client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode.agents.base import Client, Expert, Judge, Matcher
from lecode.records import Case

OFFLINE = "offline"


class ConfigurationError(ValueError):
    """A role names a model, agent or strategy that cannot play it."""


@dataclass
class RoleContext:
    """What role factories may need besides their model entry.

    ``train_cases`` feeds the retrieval expert; ``runtime`` carries the LLM layer's shared
    objects (response store, endpoint limits, replay mode) built once per job.
    """

    train_cases: Sequence[Case] = ()
    prompts_dir: Path | None = None
    runtime: Any = None
    options: dict[str, Any] = field(default_factory=dict)


def _offline_agent(model_name: str, model_cfg: dict[str, Any]) -> str:
    agent = model_cfg.get("agent")
    if not agent:
        raise ConfigurationError(f"models.{model_name}: offline model needs an 'agent'")
    return str(agent)


def build_expert(
    model_name: str, model_cfg: dict[str, Any], strategy: str, ctx: RoleContext
) -> Expert:
    if model_cfg.get("backend") == OFFLINE:
        agent = _offline_agent(model_name, model_cfg)
        if strategy != "baseline":
            raise ConfigurationError(
                f"experts: offline model {model_name!r} plays only strategy 'baseline', "
                f"not {strategy!r}"
            )
        if agent == "human_replay":
            from lecode.agents.human_replay import HumanReplayExpert

            return HumanReplayExpert(name=model_name)
        if agent == "retrieval":
            from lecode.agents.retrieval import RetrievalExpert

            if not ctx.train_cases:
                raise ConfigurationError(f"models.{model_name}: retrieval needs training cases")
            return RetrievalExpert(
                name=model_name, train_cases=ctx.train_cases, top_k=int(model_cfg.get("top_k", 5))
            )
        raise ConfigurationError(f"models.{model_name}: {agent!r} is not an expert agent")
    from lecode.agents.llm_roles import build_llm_expert

    return build_llm_expert(model_name, model_cfg, strategy, ctx)


def build_client(
    model_name: str, model_cfg: dict[str, Any], strategy: str, ctx: RoleContext
) -> Client:
    if model_cfg.get("backend") == OFFLINE:
        agent = _offline_agent(model_name, model_cfg)
        if agent == "fact_lookup":
            from lecode.agents.fact_lookup import FactLookupClient

            return FactLookupClient(name=model_name, max_facts=int(model_cfg.get("max_facts", 3)))
        raise ConfigurationError(f"models.{model_name}: {agent!r} is not a client agent")
    from lecode.agents.llm_roles import build_llm_client

    return build_llm_client(model_name, model_cfg, strategy, ctx)


def build_matcher(model_name: str, model_cfg: dict[str, Any], ctx: RoleContext) -> Matcher:
    if model_cfg.get("backend") == OFFLINE:
        agent = _offline_agent(model_name, model_cfg)
        if agent == "lexical":
            from lecode.agents.lexical_matcher import LexicalMatcher

            return LexicalMatcher(name=model_name, threshold=float(model_cfg.get("threshold", 0.5)))
        raise ConfigurationError(f"models.{model_name}: {agent!r} is not a matcher agent")
    from lecode.agents.llm_roles import build_llm_matcher

    return build_llm_matcher(model_name, model_cfg, ctx)


def build_judge(model_name: str, model_cfg: dict[str, Any], ctx: RoleContext) -> Judge:
    if model_cfg.get("backend") == OFFLINE:
        raise ConfigurationError(f"models.{model_name}: no offline judge exists; use an LLM")
    from lecode.agents.llm_roles import build_llm_judge

    return build_llm_judge(model_name, model_cfg, ctx)
