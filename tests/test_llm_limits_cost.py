"""The endpoint limiter's cost per request does not grow with the number of requests waiting,
and a reply costs a bounded number of filesystem calls. Counted, never timed: callbacks the
event loop runs (every wake-up of a waiting request is one), waiters woken, and the
filesystem calls made on the progress files."""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode.llm.limits import EndpointLimits

URL = "http://127.0.0.1:9/v1"


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts the callbacks scheduled on it: a task woken from a wait, a
    future's result delivered, each is one."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduled = 0

    def call_soon(self, callback: Callable[..., Any], *args: Any, context: Any = None) -> Any:
        self.scheduled += 1
        return super().call_soon(callback, *args, context=context)


def run_counting(main: Callable[[], Any]) -> int:
    """Run ``main()`` on a counting loop; the callbacks it scheduled."""
    loop = CountingLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return loop.scheduled


def callbacks_per_request(waiting: int, limit: int = 4) -> tuple[float, EndpointLimits]:
    """``waiting`` requests asked for a slot at once, each holding it over one pass of the
    loop; event-loop callbacks per request (the ones of the gather itself subtracted)."""
    limits = EndpointLimits()
    limits.declare(URL, limit)

    async def request() -> None:
        ticket = await limits.acquire(URL)
        assert ticket is not None
        await asyncio.sleep(0)  # the request in flight
        await limits.release(URL)

    async def with_limiter() -> None:
        await asyncio.gather(*(request() for _ in range(waiting)))

    async def bare() -> None:
        async def nothing() -> None:
            await asyncio.sleep(0)

        await asyncio.gather(*(nothing() for _ in range(waiting)))

    extra = run_counting(with_limiter) - run_counting(bare)
    return extra / waiting, limits


def test_a_released_slot_wakes_one_waiter_whatever_the_queue_length() -> None:
    few, _ = callbacks_per_request(10)
    many, limits = callbacks_per_request(1000)
    # waking every waiter on every release costs ~1000 callbacks per request at 1000 waiting
    assert many <= few * 1.25 + 2, (few, many)
    assert many < 10
    # 1000 requests, 4 of them got a slot at once: the others were each woken exactly once
    assert limits.wakeups == 1000 - 4


def test_waiters_get_their_slots_in_the_order_they_asked() -> None:
    limits = EndpointLimits()
    limits.declare(URL, 2)
    order: list[int] = []

    async def request(i: int) -> None:
        assert await limits.acquire(URL) is not None
        order.append(i)
        await asyncio.sleep(0)
        await limits.release(URL)

    async def main() -> None:
        await asyncio.gather(*(request(i) for i in range(50)))

    asyncio.run(main())
    assert order == list(range(50))


def test_a_shrunk_limit_wakes_nobody_until_a_slot_is_free_under_it() -> None:
    """8 in flight under a limit of 8, 100 waiting; the limit halves (a timeout under load):
    the next four releases hand nothing over, the fifth hands over one slot."""
    limits = EndpointLimits()
    limits.declare(URL, 8)

    async def main() -> None:
        tickets = [await limits.acquire(URL) for _ in range(8)]
        limits.replied(URL)  # it answered before: a timeout halves the limit
        waiting = [asyncio.ensure_future(limits.acquire(URL)) for _ in range(100)]
        await asyncio.sleep(0)
        assert limits.timed_out(URL, tickets[0]) is not None  # 8 -> 4
        assert limits.limit(URL) == 4
        for _ in range(4):
            await limits.release(URL)
        await asyncio.sleep(0)
        assert limits.wakeups == 0 and not any(w.done() for w in waiting)
        await limits.release(URL)
        await asyncio.sleep(0)
        assert limits.wakeups == 1 and sum(w.done() for w in waiting) == 1
        assert waiting[0].done()  # the first to ask
        for w in waiting:
            w.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)

    asyncio.run(main())


def test_giving_up_an_endpoint_wakes_each_waiter_once_and_refuses_it() -> None:
    limits = EndpointLimits()
    limits.declare(URL, 2)

    async def main() -> list[Any]:
        first = [await limits.acquire(URL) for _ in range(2)]
        assert all(t is not None for t in first)
        waiting = [asyncio.ensure_future(limits.acquire(URL)) for _ in range(300)]
        await asyncio.sleep(0)
        for _ in range(3):
            limits.found_no_server(URL, "connection", "refused")
        assert limits.unreachable(URL)
        await limits.release(URL)
        await limits.release(URL)
        return await asyncio.gather(*waiting)

    results = asyncio.run(main())
    assert results == [None] * 300
    assert limits.wakeups == 300
    # and a request asking afterwards is refused without waiting
    assert asyncio.run(limits.acquire(URL)) is None


def test_a_cancelled_waiter_passes_its_slot_on() -> None:
    limits = EndpointLimits()
    limits.declare(URL, 1)

    async def main() -> None:
        assert await limits.acquire(URL) is not None
        a = asyncio.ensure_future(limits.acquire(URL))
        b = asyncio.ensure_future(limits.acquire(URL))
        await asyncio.sleep(0)
        await limits.release(URL)  # handed to a ...
        a.cancel()  # ... which is cancelled before it runs: b gets the slot
        await asyncio.gather(a, return_exceptions=True)
        assert await asyncio.wait_for(b, 1) is not None
        assert limits.in_flight(URL) == 1

    asyncio.run(main())


FS_CALLS = ("stat", "utime", "open", "mkdir")


@pytest.fixture
def fs_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """The filesystem calls made on paths under ``tmp_path`` (as pathlib makes them)."""
    calls: list[str] = []
    for name in FS_CALLS:
        real = getattr(os, name)

        def counted(path: Any, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            if str(path).startswith(str(tmp_path)):
                calls.append(_name)
            return _real(path, *args, **kw)

        monkeypatch.setattr(os, name, counted)
    yield calls


def test_replies_share_progress_at_a_bounded_rate(tmp_path: Path, fs_calls: list[str]) -> None:
    """1,000 replies, each followed by a deadline computation as the endpoint makes it: a
    handful of filesystem calls in all, not one or two per reply."""
    limits = EndpointLimits(tmp_path / "progress")
    limits.declare(URL, 16)

    async def main() -> float:
        ticket = await limits.acquire(URL)
        assert ticket is not None
        started = time.monotonic()
        for _ in range(1000):
            limits.replied(URL)
            limits.deadline(URL, ticket, 120.0)
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    # at most one write and one read per SHARE_EVERY (1 s) and the directory made once
    periods = 1 + math.ceil(elapsed)
    assert 1 <= len(fs_calls) <= 1 + 2 * periods + 2, fs_calls
    assert 1 <= limits.file_calls <= len(fs_calls)  # a touch of a new file is two calls


def test_another_jobs_progress_is_still_seen(tmp_path: Path) -> None:
    """Two jobs' limiters on one progress directory, a 0.4 s timeout (shared every 0.05 s):
    a reply to one moves the other's deadline."""
    a, b = EndpointLimits(tmp_path / "p"), EndpointLimits(tmp_path / "p")
    for limits in (a, b):
        limits.declare(URL, 4, timeout=0.4)

    async def main() -> None:
        ticket = await b.acquire(URL)
        assert ticket is not None
        before = b.deadline(URL, ticket, 0.4)
        await asyncio.sleep(0.2)
        a.replied(URL)
        await asyncio.sleep(0.1)  # past b's read interval
        after = b.deadline(URL, ticket, 0.4)
        assert after > before + 0.1

    asyncio.run(main())
