"""Helpers for tests and benchmarks that drive LLM roles against the mock endpoint
(:mod:`lecode.mock`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lecode.agents.clients import build_client
from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.config.models import ModelEntry, model_entry
from lecode.llm.retry import RetryPolicy
from lecode.llm.runtime import LLMRuntime
from lecode.mock import MockServer
from lecode.records import Case, Transcript

FAST_RETRY = RetryPolicy(base_delay=0.001, rate_limit_delay=0.001, max_delay=0.01)
KEY_ENV = "LECODE_TEST_API_KEY"
TEST_KEY = "sk-test-0123456789abcdef"


@contextmanager
def mock_endpoint(cases_file: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    """The mock endpoint playing ``cases_file``, with the test key in :data:`KEY_ENV`."""
    monkeypatch.setenv(KEY_ENV, TEST_KEY)
    with MockServer(case_files=[cases_file]) as server:
        yield server


def entry(name: str, raw: Mapping[str, Any]) -> ModelEntry:
    """The typed model entry ``name`` written as in ``params.yaml`` (the library takes typed
    entries; tests write theirs as mappings)."""
    return model_entry(name, raw)


def entries(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, ModelEntry]:
    """A ``models:`` mapping, each entry typed."""
    return {name: entry(name, cfg) for name, cfg in raw.items()}


def model_cfg(url: str, **overrides: Any) -> ModelEntry:
    """An ``openai``-backend model entry pointing at the mock."""
    return entry("mock", model_dict(url, **overrides))


def model_dict(url: str, **overrides: Any) -> dict[str, Any]:
    """:func:`model_cfg` as written in ``params.yaml``."""
    cfg: dict[str, Any] = {
        "backend": "openai",
        "base_url": url,
        "model": "mock",
        "api_key_env": KEY_ENV,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 512,
        "seed": 7,
        "concurrency": 8,
        "timeout": 10,
        "max_retries": 4,
        "price": {"prompt": 0.001, "completion": 0.002},
    }
    cfg.update(overrides)
    return cfg


def runtime(store: str | Path, **kwargs: Any) -> LLMRuntime:
    kwargs.setdefault("retry", FAST_RETRY)
    return LLMRuntime.create(store, **kwargs)


async def simulate(
    cases: Sequence[Case],
    rt: LLMRuntime,
    cfg: ModelEntry,
    *,
    strategy: str = "zero_shot",
    client_strategy: str = "first_person_dialogue",
    max_turns: int = 10,
) -> list[Transcript]:
    """All cases concurrently through the real consultation loop."""
    from lecode.evaluation.consultations import simulate_case

    rt.default_max_turns = max_turns  # the LLM experts' budget in this run
    ctx = RoleContext(runtime=rt)
    expert = build_expert("mock-expert", cfg, strategy, ctx)
    client = build_client("mock-client", cfg, client_strategy, ctx)
    return list(
        await asyncio.gather(
            *(
                simulate_case(c, expert, client, strategy=strategy, max_turns=max_turns)
                for c in cases
            )
        )
    )
