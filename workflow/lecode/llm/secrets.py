"""Keeping API keys out of every message, log line and file.

Keys are read from the environment variable a model entry names (``api_key_env``) and are held
only by the endpoint's HTTP connection (:mod:`lecode.llm.endpoint`). Everything this package
formats from foreign text (exception messages, response bodies) passes through :func:`redact`
first; :class:`RedactingFilter` does the same for log records of the ``lecode`` loggers.
"""

from __future__ import annotations

import logging
import re
import threading

_MASK = "[REDACTED]"
_lock = threading.Lock()
_known: set[str] = set()

# Credential shapes redacted even when their value was never registered.
_PATTERNS = (
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._-]{8,}"),
)


def register_secret(value: str | None) -> None:
    """Remember a credential value so that :func:`redact` masks it wherever it appears."""
    if value and len(value) >= 4:
        with _lock:
            _known.add(value)


def redact(text: object) -> str:
    """``str(text)`` with every registered secret and credential-shaped token masked."""
    out = str(text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        if secret in out:
            out = out.replace(secret, _MASK)
    out = _PATTERNS[0].sub("Bearer " + _MASK, out)
    out = _PATTERNS[1].sub(_MASK, out)
    out = _PATTERNS[2].sub(lambda m: m.group(1) + _MASK, out)
    return out


class RedactingFilter(logging.Filter):
    """Rewrites a log record's message (with its arguments applied) through :func:`redact`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed log call must not crash the job
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        return True
