"""Token and cost ledger: one line per LLM call, totals per role and model.

The per-dialogue view lives in ``Transcript.usage`` (the roles add to the dialogue's
``UsageMeter``); this ledger is the per-job view for the job log and cost reports.
Tokens and cost of a cached call are those of the stored response (what the result cost to
produce), so they do not change between a first run and a replay; ``cached`` and ``retries``
describe the run itself.

Reasoning models (deepseek-r1 style) spend part of ``completion_tokens`` on hidden reasoning.
``reasoning_tokens`` counts that part separately: the API's
``usage.completion_tokens_details.reasoning_tokens`` when it reports one, else an *estimate*
from the reasoning text (:func:`estimate_tokens`: one token per CJK character plus one per
four other non-space characters), never more than ``completion_tokens`` when that is known.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

from lecode.records import RoleUsage

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_SPACE = re.compile(r"\s")


def estimate_tokens(text: str) -> int:
    """A rough token count of ``text`` (an estimate, not any tokenizer's count): one token per
    CJK character or full-width sign, one per four other non-space characters (rounded up)."""
    cjk = len(_CJK.findall(text))
    other = len(_SPACE.sub("", text)) - cjk
    return cjk + math.ceil(other / 4)


def reported_reasoning_tokens(usage: Any) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` of an API response's usage object
    (a dict), or ``None`` when the API does not report it."""
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("completion_tokens_details")
    if not isinstance(details, Mapping):
        return None
    value = details.get("reasoning_tokens")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return max(0, int(value))


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return max(0, int(value))


def reported_cached_tokens(usage: Any) -> int | None:
    """The prompt tokens an API response says it read from the provider's prompt cache, or
    ``None`` when it does not say. Three shapes: ``usage.prompt_tokens_details.cached_tokens``
    (OpenAI, DashScope, vLLM with prefix caching), ``usage.prompt_cache_hit_tokens`` (DeepSeek,
    beside ``prompt_cache_miss_tokens``), and ``usage.cached_tokens`` (some OpenAI-compatible
    servers). Never more than ``usage.prompt_tokens`` when that is given."""
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("prompt_tokens_details")
    found = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    for name in ("prompt_cache_hit_tokens", "cached_tokens"):
        if found is None:
            found = _count(usage.get(name))
    prompt = _count(usage.get("prompt_tokens"))
    if found is not None and prompt is not None:
        found = min(found, prompt)
    return found


def reasoning_tokens(
    reasoning: str, *, reported: int | None = None, completion_tokens: int | None = None
) -> int:
    """Reasoning tokens of one response: ``reported`` by the API when given, else an estimate
    from the ``reasoning`` text (capped at ``completion_tokens`` when that is known, > 0)."""
    if reported is not None:
        return max(0, reported)
    if not reasoning.strip():
        return 0
    n = estimate_tokens(reasoning)
    return min(n, completion_tokens) if completion_tokens else n


class _CallCounts(Protocol):
    @property
    def cached(self) -> bool: ...
    @property
    def retries(self) -> int: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cost(self) -> float: ...


def call_usage(call: _CallCounts) -> RoleUsage:
    """The usage of one LLM call (a stored response or a ledger record). ``reasoning_tokens``
    is read when the call object has it (0 otherwise)."""
    return RoleUsage(
        calls=1,
        cached=int(call.cached),
        retries=call.retries,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        cost=call.cost,
        reasoning_tokens=int(getattr(call, "reasoning_tokens", 0) or 0),
        cached_prompt_tokens=int(getattr(call, "cached_prompt_tokens", 0) or 0),
    )


@dataclass(frozen=True)
class CallRecord:
    model: str
    role: str
    purpose: str
    key: str
    cached: bool
    retries: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    latency_s: float
    status: str = "ok"  # ok | error
    error: str = ""
    reasoning_tokens: int = 0  # part of completion_tokens; reported, else estimated
    cached_prompt_tokens: int = 0  # part of prompt_tokens read from the provider's cache

    def usage(self) -> RoleUsage:
        return call_usage(self)


class UsageLedger:
    """Accumulates :class:`CallRecord` totals; optionally appends each call to a JSONL file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        # (role, model) -> [calls, cached, retries, prompt, completion, cost, reasoning,
        #                   cached prompt]
        self._sums: dict[tuple[str, str], list[Any]] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._fh = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    def record(self, call: CallRecord) -> None:
        # Called once per LLM call (store hits too): running sums in plain lists rather than a
        # new RoleUsage per call, and the file row built from the record's fields directly
        # (``dataclasses.asdict`` copies deeply); the row is the same JSON as before.
        with self._lock:
            k = (call.role, call.model)
            sums = self._sums.get(k)
            if sums is None:
                sums = self._sums[k] = [0, 0, 0, 0, 0, 0.0, 0, 0]
            if call.status == "ok":
                sums[0] += 1
                sums[1] += int(call.cached)
                sums[2] += call.retries
                sums[3] += call.prompt_tokens
                sums[4] += call.completion_tokens
                sums[5] += call.cost
                sums[6] += int(call.reasoning_tokens or 0)
                sums[7] += call.cached_prompt_tokens
            else:
                self._errors[k] = self._errors.get(k, 0) + 1
                sums[2] += call.retries
            if self._fh is not None:
                row = {f: getattr(call, f) for f in _ROW_FIELDS}
                row["ts"] = round(time.time(), 3)
                self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def totals(self) -> dict[tuple[str, str], RoleUsage]:
        with self._lock:
            return {
                k: RoleUsage(
                    calls=s[0],
                    cached=s[1],
                    retries=s[2],
                    prompt_tokens=s[3],
                    completion_tokens=s[4],
                    cost=s[5],
                    reasoning_tokens=s[6],
                    cached_prompt_tokens=s[7],
                )
                for k, s in self._sums.items()
            }

    def errors(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._errors)

    def summary_lines(self) -> list[str]:
        lines = []
        errors = self.errors()
        for (role, model), u in sorted(self.totals().items()):
            lines.append(
                f"{role:8s} {model:24s} calls={u.calls} cached={u.cached} retries={u.retries} "
                f"errors={errors.get((role, model), 0)} prompt_tokens={u.prompt_tokens} "
                f"completion_tokens={u.completion_tokens} reasoning_tokens={u.reasoning_tokens} "
                f"cost={u.cost:.4f}"
            )
        return lines

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


#: The ledger file's columns: a call record's fields and ``ts``, in sorted order.
_ROW_FIELDS = tuple(sorted(f.name for f in fields(CallRecord)))
assert "ts" not in _ROW_FIELDS and sorted([*_ROW_FIELDS, "ts"]) == [*_ROW_FIELDS, "ts"]
