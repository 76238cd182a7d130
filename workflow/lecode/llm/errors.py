"""Exceptions of the LLM layer.

:class:`LLMCallError` is an infrastructure failure of one request (retries exhausted, or a
non-retryable 4xx). The consultation loop turns it into ``stop_reason="error"``; matching and
judging mark the dialogue as missing. :class:`ReplayMissError` is deliberately *not* a subclass:
a cache miss in replay mode must stop the job, not become one more failed dialogue.
"""

from __future__ import annotations

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
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.attempts = attempts
        self.retries = retries
        self.status = status


class ReplayMissError(RuntimeError):
    """Replay mode found no stored response for a request; names the request."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class LLMConfigError(ValueError):
    """A model entry cannot be used (missing field, unknown backend, missing API key)."""
