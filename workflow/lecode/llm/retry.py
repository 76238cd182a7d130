"""Which failures are retried, and how long to wait before the next attempt.

Rate limits (429) back off from a longer base delay (or the server's ``Retry-After``) than
server errors, timeouts and connection errors; any other 4xx is final at once.
Delays are exponential with full jitter: ``uniform(0, min(cap, base * 2**attempt))``.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from lecode.config.sections import RetrySettings
from lecode.llm.errors import FailureKind
from lecode.llm.http import transport_failure

_RETRY = RetrySettings()


class EmptyResponseError(Exception):
    """A completion arrived without any text."""


class StatusError(Exception):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after

    @classmethod
    def from_reply(cls, status: int, body: bytes, retry_after: str | None) -> StatusError:
        """The error message of an OpenAI-style error body (``{"error": {"message": ...}}``),
        else the body's text."""
        text = body.decode("utf-8", "replace")
        message = text
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            err = data.get("error", data)
            if isinstance(err, dict) and err.get("message"):
                message = str(err["message"])
            elif isinstance(err, str):
                message = err
        return cls(status, message, _seconds(retry_after))


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    status: int | None
    retry_after: float | None
    detail: str
    final: bool = False  # a failure no retry can fix, whatever its kind

    @property
    def retryable(self) -> bool:
        return self.kind != "client_error" and not self.final


def classify(exc: BaseException) -> Failure:
    """Map an exception of the HTTP library (:mod:`lecode.llm.http`; also the ``openai`` SDK's)
    or of our checks of the reply to a failure class."""
    if isinstance(exc, StatusError):
        detail = f"HTTP {exc.status}: {_short(exc.message)}"
        if exc.status == 429:
            return Failure("rate_limit", exc.status, exc.retry_after, detail)
        if exc.status >= 500:
            return Failure("server", exc.status, exc.retry_after, detail)
        return Failure("client_error", exc.status, None, detail)
    transport = transport_failure(exc)
    if transport is not None:
        return Failure(
            transport.kind, None, None, _short(transport.detail), final=not transport.retryable
        )
    # The ``openai`` SDK's exceptions (the endpoint no longer calls the SDK; kept for callers
    # that do). Not imported here: where the SDK is not loaded, none of its exceptions exist.
    openai: Any = sys.modules.get("openai")
    if openai is not None and isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc)
        detail = f"HTTP {status}: {_short(exc.message)}"
        if status == 429:
            return Failure("rate_limit", status, retry_after, detail)
        if status >= 500:
            return Failure("server", status, retry_after, detail)
        return Failure("client_error", status, None, detail)
    if openai is not None and isinstance(exc, openai.APITimeoutError):
        return Failure("timeout", None, None, "request timed out")
    if openai is not None and isinstance(exc, openai.APIConnectionError):
        return Failure("connection", None, None, f"connection error: {_short(str(exc))}")
    if isinstance(exc, EmptyResponseError):
        return Failure("empty", None, None, "empty completion")
    if isinstance(exc, json.JSONDecodeError) or (
        openai is not None and isinstance(exc, openai.APIResponseValidationError)
    ):
        return Failure("malformed", None, None, f"malformed response body: {_short(str(exc))}")
    if isinstance(exc, KeyError | IndexError | TypeError | AttributeError | ValidationError):
        return Failure("malformed", None, None, f"malformed response body: {_short(repr(exc))}")
    raise exc  # a bug, not an endpoint failure


def _retry_after(exc: Any) -> float | None:
    """``Retry-After`` of an ``openai.APIStatusError``."""
    try:
        value = exc.response.headers.get("retry-after")
    except Exception:
        return None
    return _seconds(value)


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff delays (defaults: ``llm.retry`` of the settings); how many retries a request
    gets is its model entry's ``max_retries``."""

    base_delay: float = _RETRY.base_delay
    rate_limit_delay: float = _RETRY.rate_limit_delay
    max_delay: float = _RETRY.max_delay
    jitter: bool = True

    @classmethod
    def of(cls, settings: RetrySettings) -> RetryPolicy:
        return cls(
            base_delay=settings.base_delay,
            rate_limit_delay=settings.rate_limit_delay,
            max_delay=settings.max_delay,
        )

    def delay(self, failure: Failure, retry_number: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry_number`` (0-based)."""
        base = self.rate_limit_delay if failure.kind == "rate_limit" else self.base_delay
        ceiling = min(self.max_delay, base * (2**retry_number))
        wait = rng.uniform(0.0, ceiling) if self.jitter else ceiling
        if failure.retry_after is not None:
            wait = max(wait, min(self.max_delay, failure.retry_after))
        return wait
