"""Load and validate LeCoDe JSONL files into :class:`~lecode.records.Case` records.

Accepts both spellings used by the LeCoDe release: Chinese fact keys (``原子事实`` /
``重要性分数``, as in the released files) or English ones (``atomic_facts`` /
``importance_scores``, as in its README), and speakers ``用户``/``律师`` or ``user``/``lawyer``.
Every violation is reported with file, line, record id and field; a file with any violation
yields no cases at all, so nothing downstream is half-written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecode.records import INTENT_LABELS, Case, Speaker, Utterance

FACTS_KEYS = ("原子事实", "atomic_facts")
IMPORTANCE_KEYS = ("重要性分数", "importance_scores")
FACT_DICT_KEY = "key_fact_dict_hard_version"
SPEAKERS: dict[str, Speaker] = {
    "用户": "client",
    "user": "client",
    "client": "client",
    "律师": "lawyer",
    "lawyer": "lawyer",
}
_INTENT_NUMBER = re.compile(r"^\s*\[(\d+)\]")


@dataclass(frozen=True)
class Violation:
    """One problem in one record."""

    path: str
    line: int
    record_id: str | None
    field: str
    message: str

    def __str__(self) -> str:
        rid = self.record_id if self.record_id is not None else "?"
        return f"{self.path}:{self.line}: record {rid!r}: field {self.field!r}: {self.message}"


class DatasetError(ValueError):
    """The file has violations; ``violations`` lists every one of them."""

    def __init__(self, violations: Sequence[Violation]):
        self.violations = list(violations)
        shown = "\n".join(f"  {v}" for v in self.violations[:50])
        more = len(self.violations) - 50
        tail = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(f"{len(self.violations)} problem(s) in the dataset:\n{shown}{tail}")


def _intent_number(label: Any) -> int | None:
    if isinstance(label, int):
        return label if label in INTENT_LABELS else None
    if not isinstance(label, str):
        return None
    m = _INTENT_NUMBER.match(label)
    if m:
        n = int(m.group(1))
        return n if n in INTENT_LABELS else None
    for n, name in INTENT_LABELS.items():
        if label.strip().lower() == name.lower():
            return n
    return None


class _RecordParser:
    """Parses one raw JSON object, collecting violations instead of stopping at the first."""

    def __init__(self, path: str, line: int, raw: dict[str, Any]):
        self.path, self.line, self.raw = path, line, raw
        rid = raw.get("id")
        self.rid = str(rid) if isinstance(rid, str | int) and str(rid).strip() else None
        self.violations: list[Violation] = []

    def bad(self, field: str, message: str) -> None:
        self.violations.append(Violation(self.path, self.line, self.rid, field, message))

    def _fact_maps(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        fd = self.raw.get(FACT_DICT_KEY)
        if not isinstance(fd, dict):
            self.bad(FACT_DICT_KEY, "missing or not an object")
            return None
        facts = next((fd[k] for k in FACTS_KEYS if k in fd), None)
        imp = next((fd[k] for k in IMPORTANCE_KEYS if k in fd), None)
        ok = True
        if not isinstance(facts, dict):
            self.bad(
                f"{FACT_DICT_KEY}.原子事实", "missing or not an object (原子事实/atomic_facts)"
            )
            ok = False
        if not isinstance(imp, dict):
            self.bad(
                f"{FACT_DICT_KEY}.重要性分数",
                "missing or not an object (重要性分数/importance_scores)",
            )
            ok = False
        return (facts, imp) if ok else None  # type: ignore[return-value]

    def _facts(self) -> tuple[list[str], list[int]]:
        maps = self._fact_maps()
        if maps is None:
            return [], []
        facts, imp = maps
        if set(facts) != set(imp):
            self.bad(
                f"{FACT_DICT_KEY}.重要性分数",
                f"keys differ from the facts': {sorted(facts)} vs {sorted(imp)}",
            )
            return [], []
        try:
            keys = sorted(facts, key=int)
        except ValueError:
            self.bad(
                f"{FACT_DICT_KEY}.原子事实", f"keys must be integer strings, got {list(facts)}"
            )
            return [], []
        if [int(k) for k in keys] != list(range(len(keys))):
            self.bad(f"{FACT_DICT_KEY}.原子事实", f"keys must be 0..n-1, got {keys}")
        if not keys:
            self.bad(f"{FACT_DICT_KEY}.原子事实", "no facts")
        out_f: list[str] = []
        out_i: list[int] = []
        for k in keys:
            text = facts[k]
            if not isinstance(text, str) or not text.strip():
                self.bad(f"{FACT_DICT_KEY}.原子事实.{k}", "empty or not a string")
                text = ""
            w = imp[k]
            if isinstance(w, bool) or not isinstance(w, int | float) or float(w) not in (1, 2, 3):
                self.bad(f"{FACT_DICT_KEY}.重要性分数.{k}", f"must be 1, 2 or 3, got {w!r}")
                w = 1
            out_f.append(text.strip())
            out_i.append(int(w))
        return out_f, out_i

    def _utterance_pair(self, field: str, i: int, item: Any) -> tuple[Speaker, str] | None:
        if not isinstance(item, list | tuple) or len(item) < 2:
            self.bad(f"{field}[{i}]", "must be [speaker, text]")
            return None
        speaker = SPEAKERS.get(str(item[0]).strip().lower()) or SPEAKERS.get(str(item[0]).strip())
        if speaker is None:
            self.bad(f"{field}[{i}]", f"unknown speaker {item[0]!r} (用户/律师 or user/lawyer)")
            return None
        if not isinstance(item[1], str):
            self.bad(f"{field}[{i}]", "text is not a string")
            return None
        return speaker, item[1]

    def _dialogue(self) -> list[Utterance]:
        raw = self.raw.get("dialogue")
        if not isinstance(raw, list) or not raw:
            self.bad("dialogue", "missing or empty")
            return []
        pairs = [self._utterance_pair("dialogue", i, u) for i, u in enumerate(raw)]
        intents = self._intents(len(raw), pairs)
        return [
            Utterance(speaker=p[0], text=p[1], intent=intents[i])
            for i, p in enumerate(pairs)
            if p is not None
        ]

    def _intents(self, n: int, pairs: list[tuple[Speaker, str] | None]) -> list[int | None]:
        """Intent numbers aligned with the dialogue, when the annotation lines up with it."""
        raw = self.raw.get("intention_annotation")
        if raw is None:
            return [None] * n
        if not isinstance(raw, list):
            self.bad("intention_annotation", "not a list")
            return [None] * n
        if len(raw) != n:
            # Real annotations sometimes merge or split utterances; keep the case, drop intents.
            return [None] * n
        out: list[int | None] = []
        aligned = True
        for i, item in enumerate(raw):
            label = item[2] if isinstance(item, list | tuple) and len(item) >= 3 else None
            num = _intent_number(label)
            if num is None:
                self.bad(f"intention_annotation[{i}]", f"unknown intent label {label!r}")
            elif num < 9 and (pair := pairs[i]) is not None and (num <= 4) != (pair[0] == "client"):
                aligned = False  # a client label on a lawyer line (or vice versa): not aligned
            out.append(num)
        return out if aligned else [None] * n

    def _str_list(self, field: str) -> list[str]:
        value = self.raw.get(field, [])
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.bad(field, "must be a list of strings")
            return []
        return value

    def parse(self) -> Case | None:
        if self.rid is None:
            self.bad("id", "missing or empty")
        query = self.raw.get("initial_query")
        if not isinstance(query, str) or not query.strip():
            self.bad("initial_query", "missing or empty")
        suggestion = self.raw.get("suggestion")
        if not isinstance(suggestion, str) or not suggestion.strip():
            self.bad("suggestion", "missing or empty")
        facts, importance = self._facts()
        dialogue = self._dialogue()
        case_type = self._str_list("case_type")
        charge_type = self._str_list("charge_type")
        if self.violations:
            return None
        return Case(
            id=str(self.rid),
            initial_query=str(query).strip(),
            dialogue=tuple(dialogue),
            facts=tuple(facts),
            importance=tuple(importance),
            suggestion=str(suggestion).strip(),
            case_type=tuple(case_type),
            charge_type=tuple(charge_type),
        )


def parse_lines(path: str, lines: Iterable[tuple[int, str]]) -> tuple[list[Case], list[Violation]]:
    """Parse numbered JSONL lines; returns the good cases and every violation found."""
    cases: list[Case] = []
    violations: list[Violation] = []
    seen: dict[str, int] = {}
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            violations.append(Violation(path, lineno, None, "<json>", f"not valid JSON: {exc}"))
            continue
        if not isinstance(raw, dict):
            violations.append(Violation(path, lineno, None, "<json>", "not a JSON object"))
            continue
        parser = _RecordParser(path, lineno, raw)
        case = parser.parse()
        violations.extend(parser.violations)
        if parser.rid is not None:
            if parser.rid in seen:
                violations.append(
                    Violation(
                        path,
                        lineno,
                        parser.rid,
                        "id",
                        f"duplicate of the id on line {seen[parser.rid]}",
                    )
                )
                continue
            seen[parser.rid] = lineno
        if case is not None:
            cases.append(case)
    return cases, violations


def _numbered_lines(path: Path) -> list[tuple[int, str]]:
    data = path.read_bytes()
    out: list[tuple[int, str]] = []
    bad: list[Violation] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        try:
            out.append((lineno, raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            bad.append(Violation(str(path), lineno, None, "<encoding>", f"not UTF-8: {exc}"))
    if bad:
        raise DatasetError(bad)
    return out


def load_cases(path: str | Path) -> list[Case]:
    """All cases of a LeCoDe JSONL file, or :class:`DatasetError` listing every violation."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"dataset file not found: {path}")
    cases, violations = parse_lines(str(path), _numbered_lines(path))
    if violations:
        raise DatasetError(violations)
    return cases


def validate_file(path: str | Path) -> list[Violation]:
    """Every violation in a file (empty when it is valid)."""
    try:
        load_cases(path)
    except DatasetError as exc:
        return exc.violations
    return []


def id_hash(case_id: str) -> int:
    """A stable 64-bit hash of a case id (independent of Python's hash seed and of order)."""
    return int.from_bytes(hashlib.sha256(case_id.encode("utf-8")).digest()[:8], "big")


def split_cases(cases: Sequence[Case], test_fraction: float = 0.2) -> tuple[list[Case], list[Case]]:
    """Deterministic train/test split by id hash: the same ids always land on the same side.

    Cases are ordered by the hash of their id and the last ``round(n * test_fraction)``
    go to the test set; each side keeps the input order.
    """
    n_test = round(len(cases) * test_fraction)
    ranked = sorted(cases, key=lambda c: (id_hash(c.id), c.id))
    test_ids = {c.id for c in ranked[len(ranked) - n_test :]} if n_test else set()
    return [c for c in cases if c.id not in test_ids], [c for c in cases if c.id in test_ids]


def to_lecode_json(case: Case) -> dict[str, Any]:
    """A case back in the released LeCoDe schema (Chinese keys and speakers)."""
    speaker = {"client": "用户", "lawyer": "律师"}
    out: dict[str, Any] = {
        "id": case.id,
        "dialogue": [[speaker[u.speaker], u.text] for u in case.dialogue],
        "initial_query": case.initial_query,
        "suggestion": case.suggestion,
        FACT_DICT_KEY: {
            "原子事实": {str(i): f for i, f in enumerate(case.facts)},
            "重要性分数": {str(i): float(w) for i, w in enumerate(case.importance)},
        },
        "case_type": list(case.case_type),
        "charge_type": list(case.charge_type),
    }
    if all(u.intent is not None for u in case.dialogue):
        out["intention_annotation"] = [
            [speaker[u.speaker], u.text, f"[{u.intent}] {INTENT_LABELS[u.intent or 10]}"]
            for u in case.dialogue
        ]
    return out
