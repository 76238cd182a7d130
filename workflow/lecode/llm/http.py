"""The HTTP library under the LLM endpoints (:mod:`lecode.llm.endpoint`).

``httpx2`` (the maintained successor of ``httpx``, which the ``openai`` package itself depends
on) when it is installed, else ``httpx``: the same API. Under many concurrent requests
``httpx2``'s connection pool costs about half the CPU per call of ``httpx`` 0.28
(``benchmarks/harness_throughput.py --latency 0``).
"""

from __future__ import annotations

try:
    import httpx2 as lib
except ImportError:  # pragma: no cover - environments with an older openai bring httpx only
    import httpx as lib  # type: ignore[no-redef]

__all__ = ["lib"]
