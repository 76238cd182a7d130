"""Builders of the LLM-backed roles, called by :mod:`lecode.agents.registry`.

``ctx.runtime`` must be an :class:`lecode.llm.runtime.LLMRuntime`. Options read from
``ctx.options``:

- ``max_turns``: else the runtime's (``simulation.max_turns``), else 10;
- ``replicate``: 0; replicate r samples with seed + r and has its own cache keys;
- ``mediq_threshold``: else the model entry's ``threshold_confidence``, else 0.8;
- ``max_reasks``: re-asks of matcher and judge, 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lecode.agents.llm_client_sim import LLMSimulatedClient
from lecode.agents.llm_expert import LLMExpert
from lecode.agents.llm_judge import LLMJudge
from lecode.agents.llm_matcher import LLMMatcher
from lecode.agents.registry import ConfigurationError, RoleContext
from lecode.llm.errors import LLMConfigError
from lecode.llm.runtime import LLMRuntime
from lecode.llm.templates import (
    CLIENT_STRATEGIES,
    EXPERT_STRATEGIES,
    PromptTemplate,
    load_strategy,
    template_paths,
)

__all__ = [
    "CLIENT_STRATEGIES",
    "EXPERT_STRATEGIES",
    "build_llm_client",
    "build_llm_expert",
    "build_llm_judge",
    "build_llm_matcher",
    "template_files",
]


def template_files(role: str, strategy: str, prompts_dir: Path | None = None) -> list[Path]:
    """The prompt files ``role`` played with ``strategy`` reads (matcher and judge ignore the
    strategy), for hashing into a job's configuration hash."""
    try:
        return template_paths(role, strategy, prompts_dir)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def _runtime(ctx: RoleContext, model_name: str) -> LLMRuntime:
    if not isinstance(ctx.runtime, LLMRuntime):
        raise ConfigurationError(
            f"models.{model_name}: LLM roles need RoleContext.runtime = LLMRuntime.create(...)"
        )
    return ctx.runtime


def _templates(role: str, strategy: str, ctx: RoleContext) -> dict[str, PromptTemplate]:
    try:
        return load_strategy(role, strategy, ctx.prompts_dir)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def _client(ctx: RoleContext, model_name: str, model_cfg: dict[str, Any]) -> Any:
    try:
        return _runtime(ctx, model_name).client(model_name, model_cfg)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def build_llm_expert(
    model_name: str, model_cfg: dict[str, Any], strategy: str, ctx: RoleContext
) -> LLMExpert:
    templates = _templates("expert", strategy, ctx)
    llm = _client(ctx, model_name, model_cfg)
    threshold = ctx.options.get("mediq_threshold", llm.spec.mediq_threshold)
    max_turns = ctx.options.get("max_turns", _runtime(ctx, model_name).default_max_turns)
    return LLMExpert(
        model_name,
        llm,
        templates,
        strategy=strategy,
        max_turns=int(max_turns),
        replicate=int(ctx.options.get("replicate", 0)),
        threshold=float(threshold),
    )


def build_llm_client(
    model_name: str, model_cfg: dict[str, Any], strategy: str, ctx: RoleContext
) -> LLMSimulatedClient:
    templates = _templates("client", strategy, ctx)
    return LLMSimulatedClient(
        model_name,
        _client(ctx, model_name, model_cfg),
        templates,
        strategy=strategy,
        replicate=int(ctx.options.get("replicate", 0)),
    )


def build_llm_matcher(model_name: str, model_cfg: dict[str, Any], ctx: RoleContext) -> LLMMatcher:
    return LLMMatcher(
        model_name,
        _client(ctx, model_name, model_cfg),
        _templates("matcher", "default", ctx),
        max_reasks=int(ctx.options.get("max_reasks", 2)),
        replicate=int(ctx.options.get("replicate", 0)),
    )


def build_llm_judge(model_name: str, model_cfg: dict[str, Any], ctx: RoleContext) -> LLMJudge:
    return LLMJudge(
        model_name,
        _client(ctx, model_name, model_cfg),
        _templates("judge", "default", ctx),
        max_reasks=int(ctx.options.get("max_reasks", 2)),
        replicate=int(ctx.options.get("replicate", 0)),
    )
