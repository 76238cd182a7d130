"""A slow server that answers one request at a time is not flooded at the default concurrency
(no request body is sent more than twice), a timeout while others are in flight backs off the
requests in flight and says so, and a closed port stops its endpoint's work at once. All over
real loopback HTTP."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from lecode.config.models import ModelEntry
from lecode.llm.errors import LLMCallError
from lecode.llm.retry import RetryPolicy
from lecode.llm.runtime import LLMRuntime
from tests.support.mock_llm import KEY_ENV, entry, model_dict, runtime
from tests.support.serial_server import SerialServer


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")


def _default_concurrency_cfg(url: str, **overrides: Any) -> ModelEntry:
    cfg = model_dict(url, **overrides)
    del cfg["concurrency"]  # the default: 4 per job
    return entry("m", cfg)


async def _job(rt: LLMRuntime, cfg: ModelEntry, tag: str, n: int) -> list[Any]:
    endpoint = rt.endpoint("m", cfg)
    assert rt.limits.limit(endpoint.address) == 4
    try:
        return await asyncio.gather(
            *(
                endpoint.complete(
                    [{"role": "user", "content": f"{tag} 请求 {i}"}],
                    role="expert",
                    purpose="turn",
                    template_hash="t",
                    headers={"X-Job": tag},
                )
                for i in range(n)
            ),
            return_exceptions=True,
        )
    finally:
        await rt.aclose()


def test_two_jobs_at_the_default_concurrency_do_not_flood_a_serial_server(
    tmp_path: Path,
) -> None:
    """Two jobs, 4 requests in flight each, at a server that takes 0.2 s per request and a
    0.6 s timeout (as 40 s against 120 s): a request queued 8 deep would wait 1.6 s, yet none
    is abandoned and sent again while the server works through the queue."""
    with SerialServer(lambda n: 0.2) as server:
        cfg = _default_concurrency_cfg(server.url, timeout=0.6)

        async def both() -> list[list[Any]]:
            return list(
                await asyncio.gather(
                    _job(runtime(tmp_path / "a"), cfg, "a", 8),
                    _job(runtime(tmp_path / "b"), cfg, "b", 8),
                )
            )

        results = asyncio.run(both())
    errors = [r for job in results for r in job if isinstance(r, BaseException)]
    assert errors == []
    assert len(server.sent) == 16 and max(server.sent.values()) <= 2
    assert server.computed == 16


def test_a_timeout_with_others_in_flight_backs_off_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The first request takes 1 s (a cold start) against a 0.5 s timeout: the 4 requests in
    flight time out together; the job then sends one at a time, says so, and every body is
    sent at most twice."""
    with SerialServer(lambda n: 1.0 if n == 0 else 0.1) as server:
        cfg = _default_concurrency_cfg(server.url, timeout=0.5)
        with caplog.at_level(logging.WARNING):
            results = asyncio.run(_job(runtime(tmp_path / "s"), cfg, "s", 6))
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert len(server.sent) == 6 and max(server.sent.values()) == 2
    assert f"endpoint {server.url}" in caplog.text
    assert "3 other request(s) to it were in flight" in caplog.text
    assert "sending at most 1 at a time from now on in this job (concurrency was 4)" in (
        caplog.text
    )


def test_a_closed_port_stops_the_endpoints_work_at_once(tmp_path: Path) -> None:
    """Nothing listens: the first attempts are refused, the endpoint is given up for the job,
    and every call fails naming the URL, with the default retry delays in well under the
    minute the retries of 8 calls would take."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = f"http://127.0.0.1:{port}/v1"
    rt = runtime(tmp_path / "store", retry=RetryPolicy())
    started = time.monotonic()
    results = asyncio.run(_job(rt, _default_concurrency_cfg(url, max_retries=6), "x", 8))
    elapsed = time.monotonic() - started
    assert all(isinstance(r, LLMCallError) for r in results)
    assert {r.kind for r in results} == {"connection"}
    assert {r.endpoint for r in results} == {f"{url}/chat/completions"}
    assert all("endpoint unreachable" in str(r) and url in str(r) for r in results)
    assert elapsed < 5.0


def test_a_server_that_never_answers_is_given_up_naming_the_url(tmp_path: Path) -> None:
    """The port accepts connections and nothing ever answers: the first 4 requests time out
    together (the job backs off to 1 in flight), two more time out alone, and then every call
    fails at once as a timeout naming the URL; 8 calls with 6 retries each would otherwise
    take 8 x 7 x 0.3 s / 4 = 4.2 s and more."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # the kernel accepts connections; nobody reads or answers
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        started = time.monotonic()
        results = asyncio.run(
            _job(runtime(tmp_path / "store"), _default_concurrency_cfg(url, timeout=0.3), "x", 8)
        )
        elapsed = time.monotonic() - started
    finally:
        listener.close()
    assert all(isinstance(r, LLMCallError) for r in results)
    assert {r.kind for r in results} == {"timeout"}
    assert all(f"{url}/chat/completions" in str(r) for r in results)
    assert sum("endpoint unreachable" in str(r) for r in results) >= 6
    assert elapsed < 2.5
