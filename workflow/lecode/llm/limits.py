"""Concurrency limits per endpoint inside one job.

Every model entry on the same endpoint (same base URL; a ``#fragment``, such as the LoRA
adapter of a vLLM entry, is not part of it) shares one semaphore whose size is the smallest
``concurrency`` among those entries. Across jobs, Snakemake's ``--resources api=K``
bounds how many simulation jobs run at once, so an endpoint sees at most ``K * concurrency``
requests in flight. Semaphores are created per event loop, so a runtime survives several
``asyncio.run`` calls in one process.
"""

from __future__ import annotations

import asyncio
import threading
import weakref


class EndpointLimits:
    def __init__(self) -> None:
        self._limits: dict[str, int] = {}
        self._by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def declare(self, endpoint: str, limit: int) -> None:
        """Register an endpoint; the smallest declared limit wins."""
        endpoint = _address(endpoint)
        with self._lock:
            current = self._limits.get(endpoint)
            self._limits[endpoint] = limit if current is None else min(current, limit)

    def limit(self, endpoint: str) -> int:
        return self._limits.get(_address(endpoint), 1)

    def semaphore(self, endpoint: str) -> asyncio.Semaphore:
        endpoint = _address(endpoint)
        loop = asyncio.get_running_loop()
        sems = self._by_loop.get(loop)
        if sems is None:
            sems = self._by_loop.setdefault(loop, {})
        sem = sems.get(endpoint)
        if sem is None:
            sem = sems[endpoint] = asyncio.Semaphore(self.limit(endpoint))
        return sem


def _address(endpoint: str) -> str:
    """The endpoint without a ``#fragment`` (one server, several adapters)."""
    return endpoint.split("#", 1)[0]
