"""Builds the expert (the lawyer) of a model entry: an offline baseline or an LLM strategy."""

from __future__ import annotations

from lecode.agents.base import Expert
from lecode.agents.context import ConfigurationError, RoleContext, endpoint, llm_runtime, templates
from lecode.config.models import HumanReplay, ModelEntry, OpenAIEntry, Retrieval, VLLMEntry


def build_expert(
    model_name: str,
    entry: ModelEntry,
    strategy: str,
    ctx: RoleContext,
    *,
    replicate: int = 0,
) -> Expert:
    """``replicate`` > 0: an independent run of an LLM expert (seed + replicate, its own cache
    keys); offline experts are deterministic and ignore it."""
    if isinstance(entry, (OpenAIEntry, VLLMEntry)):
        return _llm_expert(model_name, entry, strategy, ctx, replicate)
    if strategy != "baseline":
        raise ConfigurationError(
            f"experts: offline model {model_name!r} plays only strategy 'baseline', "
            f"not {strategy!r}"
        )
    if isinstance(entry, HumanReplay):
        from lecode.agents.human_replay import HumanReplayExpert

        return HumanReplayExpert(name=model_name)
    if isinstance(entry, Retrieval):
        from lecode.agents.retrieval import RetrievalExpert

        if not ctx.train_cases:
            raise ConfigurationError(f"models.{model_name}: retrieval needs training cases")
        return RetrievalExpert(
            name=model_name,
            train_cases=ctx.train_cases,
            top_k=entry.top_k,
        )
    raise ConfigurationError(f"models.{model_name}: {entry.agent!r} is not an expert agent")


def _llm_expert(
    model_name: str,
    entry: OpenAIEntry | VLLMEntry,
    strategy: str,
    ctx: RoleContext,
    replicate: int,
) -> Expert:
    from lecode.agents.llm_expert import LLMExpert

    prompts = templates("expert", strategy, ctx)
    llm = endpoint(ctx, model_name, entry)
    max_turns = llm_runtime(ctx, model_name).default_max_turns
    return LLMExpert(
        model_name,
        llm,
        prompts,
        strategy=strategy,
        max_turns=max_turns,
        replicate=replicate,
        threshold=llm.spec.threshold_confidence,
        unmarked=entry.unmarked,
        markers=entry.markers,
    )
