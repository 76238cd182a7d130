"""Exceptions of the LLM layer.

:class:`LLMCallError` is an infrastructure failure of one request (retries exhausted, or a
non-retryable 4xx). The consultation loop turns it into ``stop_reason="error"``; matching and
judging mark the dialogue as missing. :class:`ReplayMissError` is deliberately *not* a subclass:
a cache miss in replay mode must stop the job, not become one more failed dialogue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

FailureKind = Literal[
    "rate_limit",  # HTTP 429
    "server",  # HTTP 5xx
    "timeout",  # read/connect timeout
    "connection",  # refused, reset, DNS ...
    "malformed",  # the body is not a valid chat completion
    "empty",  # a completion without text
    "client_error",  # HTTP 4xx other than 429: never retried
]


class LLMCallError(Exception):
    """A request failed for good. The message names model and cause, never a credential."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        model: str,
        attempts: int,
        retries: int,
        status: int | None = None,
        endpoint: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.attempts = attempts
        self.retries = retries
        self.status = status
        self.endpoint = endpoint  # the URL the request went to ("" before one was known)

    @property
    def cause(self) -> str:
        """The failure class as a summary names it: ``server (HTTP 500)``, ``connection``."""
        return f"{self.kind} (HTTP {self.status})" if self.status is not None else self.kind


class ReplayMissError(RuntimeError):
    """Replay mode found no stored response for a request; names the request."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class LLMConfigError(ValueError):
    """A model entry cannot be used (missing field, unknown backend, missing API key)."""


def failure_summary(errors: Iterable[LLMCallError]) -> list[str]:
    """One line per (model, endpoint URL, failure class): how many calls failed so, e.g.
    ``3 call(s) of model 'judge' to http://host/v1/chat/completions: server (HTTP 500)``;
    the most frequent first."""
    counts = Counter((e.model, e.endpoint or "(no URL)", e.cause) for e in errors)
    return [
        f"{n} call(s) of model {model!r} to {url}: {cause}"
        for (model, url, cause), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
