"""Token and cost ledger: one line per LLM call, totals per role and model.

The per-dialogue view lives in ``Transcript.usage`` (the roles add to the dialogue's
``UsageMeter``); this ledger is the per-job view for the job log and cost reports.
Tokens and cost of a cached call are those of the stored response (what the result cost to
produce), so they do not change between a first run and a replay; ``cached`` and ``retries``
describe the run itself.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from lecode.records import RoleUsage


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
    """The usage of one LLM call (a stored response or a ledger record)."""
    return RoleUsage(
        calls=1,
        cached=int(call.cached),
        retries=call.retries,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        cost=call.cost,
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

    def usage(self) -> RoleUsage:
        return call_usage(self)


class UsageLedger:
    """Accumulates :class:`CallRecord` totals; optionally appends each call to a JSONL file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._totals: dict[tuple[str, str], RoleUsage] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._fh = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    def record(self, call: CallRecord) -> None:
        with self._lock:
            k = (call.role, call.model)
            if call.status == "ok":
                self._totals[k] = self._totals.get(k, RoleUsage()) + call.usage()
            else:
                self._errors[k] = self._errors.get(k, 0) + 1
                self._totals[k] = self._totals.get(k, RoleUsage()) + RoleUsage(retries=call.retries)
            if self._fh is not None:
                row = asdict(call) | {"ts": round(time.time(), 3)}
                self._fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")

    def totals(self) -> dict[tuple[str, str], RoleUsage]:
        with self._lock:
            return dict(self._totals)

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
                f"completion_tokens={u.completion_tokens} cost={u.cost:.4f}"
            )
        return lines

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def sum_usage(usages: Iterable[Mapping[str, RoleUsage]]) -> dict[str, RoleUsage]:
    """Sum per-role usage dictionaries (e.g. ``Transcript.usage`` of one table cell)."""
    out: dict[str, RoleUsage] = {}
    for usage in usages:
        for role, u in usage.items():
            out[role] = out.get(role, RoleUsage()) + u
    return out
