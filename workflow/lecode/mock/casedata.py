"""A minimal reader of case files for the mock server (the workflow reads cases with
:mod:`lecode.dataset`).

Reads both the LeCoDe JSONL schema (``key_fact_dict_hard_version`` with ``原子事实`` /
``atomic_facts`` and ``重要性分数`` / ``importance_scores``) and the workflow's normalised case
records (``facts`` / ``importance``), so it works on the dataset and on shard files alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FACT_KEYS = ("原子事实", "atomic_facts")
_IMPORTANCE_KEYS = ("重要性分数", "importance_scores")


@dataclass(frozen=True)
class CaseText:
    id: str
    initial_query: str
    facts: tuple[str, ...]
    importance: tuple[float, ...]
    suggestion: str


def _ordered(d: Mapping[str, Any]) -> list[Any]:
    return [d[k] for k in sorted(d, key=lambda k: int(k))]


def case_from_json(obj: Mapping[str, Any]) -> CaseText:
    if "facts" in obj:
        facts = tuple(str(f) for f in obj["facts"])
        importance = tuple(float(x) for x in obj.get("importance") or [2.0] * len(facts))
    else:
        kf = obj.get("key_fact_dict_hard_version") or {}
        raw_facts: Mapping[str, Any] = next((kf[k] for k in _FACT_KEYS if k in kf), {})
        raw_imp: Mapping[str, Any] = next((kf[k] for k in _IMPORTANCE_KEYS if k in kf), {})
        facts = tuple(str(f) for f in _ordered(raw_facts))
        importance = tuple(float(x) for x in _ordered(raw_imp)) if raw_imp else ()
    return CaseText(
        id=str(obj["id"]),
        initial_query=str(obj["initial_query"]),
        facts=facts,
        importance=importance,
        suggestion=str(obj.get("suggestion") or ""),
    )


def read_cases(paths: Iterable[str | Path]) -> list[CaseText]:
    out: list[CaseText] = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    out.append(case_from_json(json.loads(line)))
    return out
