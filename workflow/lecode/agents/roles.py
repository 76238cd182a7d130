"""The role context of a job: training cases, and the LLM runtime when a role needs one."""

from __future__ import annotations

from collections.abc import Sequence

from lecode.agents.context import RoleContext
from lecode.records import Case
from lecode.specs import LLMRuntimeSpec, Role


def role_context(
    runtime: LLMRuntimeSpec, roles: Sequence[Role], *, train: Sequence[Case] = (), job: str = ""
) -> RoleContext:
    ctx = RoleContext(train_cases=train)
    if any(r.is_llm for r in roles):
        from lecode.llm.runtime import LLMRuntime

        ctx.runtime = LLMRuntime.from_spec(runtime, job=job)
    return ctx


def close_context(ctx: RoleContext) -> None:
    if ctx.runtime is not None:
        ctx.runtime.close()
