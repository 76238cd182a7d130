"""What failed in a run, summarised when it ends (the Snakefile's ``onsuccess``/``onerror``).

A dialogue that ended in ``error`` (an LLM call failed after its retries,
:mod:`lecode.evaluation.consultations`) is kept in its transcript shard with the call's message,
which names the model, the endpoint URL and the failure class
(:class:`lecode.llm.errors.LLMCallError`); so is a dialogue whose matching or judging failed, in
its match or judgement shard. At the end of a run the outputs of every planned system are read:
each system and step (simulation, matching, judging) with failures gets one line per (endpoint
URL, failure class) with its count, and a step that failed for every dialogue of a system fails
the run (after everything that could be built was built): its row would be an empty 0/N, not a
result. Matches of dialogues that failed and judgements of dialogues without advice are not
failures of their step."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: The message of :class:`lecode.llm.errors.LLMCallError` (``Endpoint._request`` writes it).
_CALL_ERROR = re.compile(
    r"model (?P<model>'[^']*'|\"[^\"]*\") at (?P<url>\S+) \([^)]*\): "
    r"(?P<kind>[a-z_]+) after \d+ attempt\(s\): (?P<detail>.*)",
    re.S,
)
_STATUS = re.compile(r"HTTP (\d{3})\b")


#: What each step's records hold: (record field with the outcome, failure value, messages of
#: records that are not the step's own failure).
STEPS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "simulation": ("stop_reason", "error", ()),
    "matching": ("status", "error", ("the dialogue itself failed",)),
    "judging": ("status", "error", ("no advice",)),
}


@dataclass
class SystemFailures:
    label: str
    step: str = "simulation"
    dialogues: int = 0
    failed: int = 0
    causes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (URL, class) -> n

    @property
    def all_failed(self) -> bool:
        return self.dialogues > 0 and self.failed == self.dialogues


def cause_of(error: str | None) -> tuple[str, str]:
    """(endpoint URL, failure class) of a failed dialogue's error message, e.g.
    ``("http://host/v1/chat/completions", "server (HTTP 500)")``; ``("-", <message start>)``
    for a message that is not an LLM call's."""
    m = _CALL_ERROR.search(error or "")
    if m is None:
        return "-", " ".join((error or "unknown error").split())[:120]
    kind = m.group("kind")
    status = _STATUS.match(m.group("detail"))
    return m.group("url"), f"{kind} (HTTP {status.group(1)})" if status else kind


def read_failures(label: str, files: list[str], step: str = "simulation") -> SystemFailures:
    """The failures of one system's ``step`` (:data:`STEPS`) in its output shards that exist."""
    records: list[dict[str, Any]] = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError:
            continue
        for line in lines:
            if not line.strip():
                continue
            if '": "error"' not in line:  # no failure on this line: not worth parsing
                records.append({})
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return of_records(label, records, step)


def of_records(label: str, records: list[dict[str, Any]], step: str) -> SystemFailures:
    """The failures among records already read (a job's own, for its log)."""
    field_name, failure, not_own = STEPS[step]
    out = SystemFailures(label, step)
    for r in records:
        error = r.get("error") or ""
        if r.get(field_name) == failure and error.startswith(not_own):
            continue
        out.dialogues += 1
        if r.get(field_name) == failure:
            out.failed += 1
            out.causes[cause_of(error)] += 1
    return out


def run_failures(plan: Any) -> list[SystemFailures]:
    """Every planned system and step with failures (an
    :class:`~lecode.evaluation.plan.EvaluationPlan`)."""
    out = []
    for system in plan.systems:
        e, s = system.expert, system.strategy
        outputs = {
            "simulation": [plan.transcript(e, s, k) for k in plan.shards],
            "matching": [plan.match(e, s, k) for k in plan.shards],
            "judging": [plan.judgement(e, s, k) for k in plan.shards] if plan.jcfg else [],
        }
        for step, files in outputs.items():
            got = read_failures(system.label, files, step)
            if got.failed:
                out.append(got)
    return out


def summary(failures: list[SystemFailures]) -> list[str]:
    """One line per system and one per (endpoint, failure class) under it."""
    lines = []
    for f in failures:
        verdict = "every one failed" if f.all_failed else "retried on the next run"
        what = "dialogues failed" if f.step == "simulation" else f"dialogues: {f.step} failed"
        lines.append(f"system {f.label}: {f.failed}/{f.dialogues} {what} ({verdict})")
        for (url, cause), n in sorted(f.causes.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {n} x {cause} at {url}")
    return lines
