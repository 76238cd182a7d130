"""What role builders share: the context a job gives them, and the LLM plumbing.

Each role has its own builder module (:mod:`~lecode.agents.experts`,
:mod:`~lecode.agents.clients`, :mod:`~lecode.agents.matchers`, :mod:`~lecode.agents.judges`),
so a step's code fingerprint covers only the roles it plays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lecode.records import Case

if TYPE_CHECKING:
    from lecode.config.models import ModelEntry
    from lecode.llm.endpoint import Endpoint
    from lecode.llm.runtime import LLMRuntime
    from lecode.llm.templates import PromptTemplate

OFFLINE = "offline"


class ConfigurationError(ValueError):
    """A role names a model, agent or strategy that cannot play it."""


@dataclass
class RoleContext:
    """What role builders may need besides their model entry.

    ``train_cases`` feeds the retrieval expert; ``runtime`` carries the LLM layer's shared
    objects (response store, endpoint limits, replay mode, the turn budget) built once per job.
    """

    train_cases: Sequence[Case] = ()
    runtime: Any = None


def llm_runtime(ctx: RoleContext, model_name: str) -> LLMRuntime:
    from lecode.llm.runtime import LLMRuntime

    if not isinstance(ctx.runtime, LLMRuntime):
        raise ConfigurationError(
            f"models.{model_name}: LLM roles need RoleContext.runtime = LLMRuntime.create(...)"
        )
    return ctx.runtime


def templates(role: str, strategy: str, ctx: RoleContext) -> dict[str, PromptTemplate]:
    from lecode.llm.errors import LLMConfigError
    from lecode.strategies.templates import load_strategy

    try:
        return load_strategy(role, strategy)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def endpoint(ctx: RoleContext, model_name: str, entry: ModelEntry) -> Endpoint:
    from lecode.llm.errors import LLMConfigError

    try:
        return llm_runtime(ctx, model_name).endpoint(model_name, entry)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc
