"""Retries per fault class against the real mock endpoint over loopback HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.llm.errors import LLMCallError
from lecode.mock import MockServer
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime

MESSAGES = [{"role": "system", "content": "你是律师。"}, {"role": "user", "content": "你好"}]


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    server = MockServer(slow_seconds=1.5)
    server.start()
    yield server
    server.stop()


def call(tmp_path: Path, url: str, n: int = 1, **cfg: object):
    rt = runtime(tmp_path / "store")
    endpoint = rt.endpoint("m", model_cfg(url, **cfg))

    async def go():
        try:
            return await asyncio.gather(
                *(
                    endpoint.complete(
                        [*MESSAGES, {"role": "user", "content": str(i)}],
                        role="expert",
                        purpose="turn",
                        template_hash="t",
                    )
                    for i in range(n)
                )
            )
        finally:
            await rt.aclose()

    return rt, asyncio.run(go())


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("rate_limit", "rate_limit"),
        ("server_error", "server"),
        ("malformed_body", "malformed"),
        ("empty", "empty"),
    ],
)
def test_retryable_faults_exhaust_then_fail(
    tmp_path: Path, mock: MockServer, fault: str, kind: str
) -> None:
    mock.set_faults({fault: 1.0})
    with pytest.raises(LLMCallError) as info:
        call(tmp_path, mock.url, max_retries=2)
    err = info.value
    assert (err.kind, err.attempts, err.retries) == (kind, 3, 2)
    assert mock.stats()["total_requests"] == 3
    assert not any(p.stat().st_size for p in (tmp_path / "store").rglob("seg-*"))  # not stored


def test_timeouts_are_retried(tmp_path: Path, mock: MockServer) -> None:
    mock.set_faults({"timeout": 1.0}, slow_seconds=1.0)
    with pytest.raises(LLMCallError) as info:
        call(tmp_path, mock.url, max_retries=1, timeout=0.3)
    assert (info.value.kind, info.value.attempts) == ("timeout", 2)


def test_client_errors_are_not_retried(tmp_path: Path, mock: MockServer) -> None:
    mock.set_faults({"unauthorized_echo": 1.0})
    with pytest.raises(LLMCallError) as info:
        call(tmp_path, mock.url, max_retries=5)
    assert (info.value.kind, info.value.status, info.value.attempts) == ("client_error", 401, 1)
    assert mock.stats()["total_requests"] == 1


def test_partial_faults_recover_and_retries_are_counted(tmp_path: Path, mock: MockServer) -> None:
    mock.set_faults({"rate_limit": 0.3, "server_error": 0.2, "malformed_body": 0.1})
    rt, completions = call(tmp_path, mock.url, n=40, max_retries=8)
    retries = sum(c.retries for c in completions)
    stats = mock.stats()
    assert retries == sum(stats["faults"].values()) > 0
    assert stats["ok"]["expert"] == 40
    assert all(not c.cached and c.text.startswith(("提问", "建议")) for c in completions)
    (usage,) = rt.ledger.totals().values()
    assert (usage.calls, usage.retries) == (40, retries)


def test_responses_are_served_from_the_store(tmp_path: Path, mock: MockServer) -> None:
    call(tmp_path, mock.url, n=5)
    rt, again = call(tmp_path, mock.url, n=5)
    assert all(c.cached and c.retries == 0 for c in again)
    assert mock.stats()["total_requests"] == 5
    assert rt.network_calls == 0


def test_concurrency_limit_per_endpoint(tmp_path: Path, mock: MockServer) -> None:
    mock.set_latency(0.05)
    call(tmp_path, mock.url, n=24, concurrency=3)
    assert mock.stats()["max_inflight"] == 3
