"""Offline replay: no network, the first miss fails naming the request, a warm store suffices."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lecode.dataset import load_cases
from lecode.llm.errors import LLMCallError, ReplayMissError
from lecode.llm.runtime import LLMRuntime
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import KEY_ENV, mock_endpoint, model_cfg, runtime, simulate


def test_replay_reproduces_a_warm_store_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(6)))
    with mock_endpoint(tmp_path / "cases.jsonl", monkeypatch) as mock:
        url = mock.url
        rt = runtime(tmp_path / "store")
        first = asyncio.run(simulate(cases, rt, model_cfg(url), strategy="mediq"))
        rt.close()
    # the endpoint is gone; the key is gone; replay forced by the environment variable
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.setenv("LECODE_REPLAY", "1")
    rt = runtime(tmp_path / "store")
    assert rt.replay
    again = asyncio.run(simulate(cases, rt, model_cfg(url), strategy="mediq"))
    assert rt.network_calls == 0
    assert [t.model_dump(exclude={"usage"}) for t in again] == [
        t.model_dump(exclude={"usage"}) for t in first
    ]
    for a, b in zip(first, again, strict=True):
        for role in ("expert", "client"):
            assert b.usage[role].cached == b.usage[role].calls == a.usage[role].calls
            assert (b.usage[role].prompt_tokens, b.usage[role].cost) == (
                a.usage[role].prompt_tokens,
                a.usage[role].cost,
            )
    rt.close()


def test_replay_miss_fails_and_names_the_request(tmp_path: Path) -> None:
    cases = load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(1)))
    rt = runtime(tmp_path / "empty-store", replay=True)
    cfg = model_cfg("http://127.0.0.1:9/v1")  # nothing listens; nothing may be contacted
    with pytest.raises(ReplayMissError) as info:
        asyncio.run(simulate(cases, rt, cfg))
    message = str(info.value)
    assert "expert/turn" in message and "mock-expert" in message and "key" in message
    assert not isinstance(info.value, LLMCallError)  # must stop the job, not become an outcome
    assert rt.network_calls == 0
    assert not (tmp_path / "empty-store").exists()


def test_replay_setting_from_the_runtime_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lecode.config.sections import LLMSettings
    from lecode.specs import LLMRuntimeSpec

    monkeypatch.delenv("LECODE_REPLAY", raising=False)
    spec = LLMRuntimeSpec(llm=LLMSettings(store_dir=str(tmp_path / "s"), replay=True), max_turns=4)
    rt = LLMRuntime.from_spec(spec, job="simulate x")
    assert rt.replay and rt.store.readonly and rt.default_max_turns == 4
    plain = LLMRuntimeSpec(llm=LLMSettings(store_dir=str(tmp_path)))
    assert not LLMRuntime.from_spec(plain).replay


def test_two_jobs_sending_the_same_requests_at_once_record_what_replay_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two jobs on one store send the same requests at the same time: both reach the endpoint,
    whose prompt cache then answers the second copy differently. Each job records the
    response stored first, so both transcripts, usage included, are what a replay reads."""
    cases = load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(3)))

    async def both(url: str) -> tuple[list, list]:
        one, two = runtime(tmp_path / "store"), runtime(tmp_path / "store")
        try:
            a, b = await asyncio.gather(
                simulate(cases, one, model_cfg(url), strategy="mediq"),
                simulate(cases, two, model_cfg(url), strategy="mediq"),
            )
        finally:
            one.close()
            two.close()
        assert one.network_calls > 0 and two.network_calls > 0  # both asked: a real race
        return a, b

    with mock_endpoint(tmp_path / "cases.jsonl", monkeypatch) as mock:
        url = mock.url
        first, second = asyncio.run(both(url))
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.setenv("LECODE_REPLAY", "1")
    rt = runtime(tmp_path / "store")
    replayed = asyncio.run(simulate(cases, rt, model_cfg(url), strategy="mediq"))
    rt.close()

    def seen(transcripts: list) -> list:
        return [
            (
                t.model_dump(exclude={"usage"}),
                {
                    role: (u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens)
                    for role, u in t.usage.items()
                },
            )
            for t in transcripts
        ]

    assert any(u.cached_prompt_tokens for t in replayed for u in t.usage.values())
    assert seen(first) == seen(second) == seen(replayed)
