"""A deterministic OpenAI-compatible mock endpoint that plays every role from the case data,
with fault injection, for tests and benchmarks (loopback only).

``MockServer`` runs in a thread of the calling process; ``spawn_mock`` runs it in a child
process (``python -m lecode.mock``) and ``MockControl`` talks to either over HTTP.
"""

from lecode.mock.faults import CONTENT_FAULTS, HTTP_FAULTS, FaultConfig
from lecode.mock.server import MockControl, MockServer, spawn_mock

__all__ = [
    "CONTENT_FAULTS",
    "HTTP_FAULTS",
    "FaultConfig",
    "MockControl",
    "MockServer",
    "spawn_mock",
]
