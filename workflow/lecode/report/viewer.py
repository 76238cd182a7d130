"""The data behind the HTML transcript viewer (pure: records in, JSON-ready dict out).

Shape::

    {"cases": [{"id", "query", "case_type", "charges", "facts": [{"i", "text", "w"}],
                "suggestion"}],
     "systems": [{"label", "expert", "strategy", "group"}],
     "runs": {label: {case_id: {
         "stop_reason", "error", "turns": [{"speaker", "kind", "text", "q", "facts"}],
         "matched": [i], "missed": [i] | null, "match_status", "match_error",
         "audit": {"answers", "flagged"},
         "scores": {metric: value on the display scale or null},
         "judge": {"status", "error", "scores": {...} | null, "rationale"}}}}}

``q`` is the question position (1-based) a question or its answer belongs to; ``facts`` on an
answer (or on an unanswered question) are the fact indices the matcher assigned to that
position, ``first`` marking those elicited there for the first time. An answer the client
fidelity audit flags (:mod:`lecode.audit`) carries ``audit``: ``{"q", "flags", "disclosed",
"source", "unsupported", "withheld", "contradicted"}`` (:meth:`AnswerAudit.as_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from lecode.audit import audit_transcript
from lecode.metrics.registry import with_tag
from lecode.records import JUDGE_FIELDS, Case, Judgement, Matches, Transcript
from lecode.report.spec import ReportedSystem


def _case_json(c: Case) -> dict[str, Any]:
    return {
        "id": c.id,
        "query": c.initial_query,
        "case_type": list(c.case_type),
        "charges": list(c.charge_type),
        "facts": [
            {"i": i, "text": t, "w": w}
            for i, (t, w) in enumerate(zip(c.facts, c.importance, strict=True))
        ],
        "suggestion": c.suggestion,
    }


def _turns(t: Transcript, m: Matches | None) -> tuple[list[dict[str, Any]], list[int]]:
    per_q = list(m.per_question) if m is not None and m.status == "ok" else []
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    q = 0
    for k, turn in enumerate(t.turns):
        item: dict[str, Any] = {"speaker": turn.speaker, "kind": turn.kind, "text": turn.text}
        if turn.kind == "question":
            q += 1
            item["q"] = q
            nxt = t.turns[k + 1] if k + 1 < len(t.turns) else None
            carries = nxt is None or nxt.kind != "answer"
        elif turn.kind == "answer":
            item["q"] = q
            carries = True
        else:
            carries = False
        if carries and 1 <= q <= len(per_q):
            found = list(per_q[q - 1])
            item["facts"] = [{"i": i, "first": i not in seen} for i in found]
            seen.update(found)
        out.append(item)
    return out, sorted(seen)


def _scores(row: dict[str, Any] | None) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for m in with_tag("summary"):
        v = None if row is None else row.get(m.key)
        out[m.key] = None if v is None or v != v else float(v) * m.scale
    return out


def viewer_data(
    cases: Iterable[Case],
    systems: Sequence[ReportedSystem],
    *,
    transcripts: Iterable[Transcript] = (),
    matches: Iterable[Matches] = (),
    judgements: Iterable[Judgement] = (),
    scores: pl.DataFrame | None = None,
    max_cases: int | None = None,
) -> dict[str, Any]:
    """Viewer JSON for ``cases`` (in id order, at most ``max_cases``) and ``systems``."""
    case_list = sorted(cases, key=lambda c: c.id)
    if max_cases is not None:
        case_list = case_list[:max_cases]
    by_id = {c.id: c for c in case_list}
    keyed = {s.key: s for s in systems}

    def index(records: Iterable[Any]) -> dict[tuple[str, str, str], Any]:
        return {
            (r.expert, r.strategy, r.case_id): r
            for r in records
            if (r.expert, r.strategy) in keyed and r.case_id in by_id
        }

    ts, ms, js = index(transcripts), index(matches), index(judgements)
    score_rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    if scores is not None:
        for row in scores.iter_rows(named=True):
            key = (row["expert"], row["strategy"], row["case_id"])
            if (key[0], key[1]) in keyed and key[2] in by_id:
                score_rows[key] = row
    runs: dict[str, dict[str, Any]] = {}
    for s in systems:
        per_case: dict[str, Any] = {}
        for c in case_list:
            key = (s.expert, s.strategy, c.id)
            t = ts.get(key)
            if t is None:
                continue
            m = ms.get(key)
            turns, matched = _turns(t, m)
            checked = audit_transcript(c, t, m)
            flagged = {a.position: a for a in checked.answers if a.flagged}
            for item in turns:
                if item["kind"] == "answer" and item.get("q") in flagged:
                    item["audit"] = flagged[item["q"]].as_json()
            matched_ok = m is not None and m.status == "ok"
            j = js.get(key)
            per_case[c.id] = {
                "stop_reason": t.stop_reason,
                "error": t.error,
                "turns": turns,
                "matched": matched,
                "missed": [i for i in range(c.n_facts) if i not in set(matched)]
                if matched_ok
                else None,
                "match_status": None if m is None else m.status,
                "match_error": None if m is None else m.error,
                "audit": {"answers": len(checked.answers), "flagged": checked.n_flagged},
                "scores": _scores(score_rows.get(key)),
                "judge": None
                if j is None
                else {
                    "status": j.status,
                    "error": j.error,
                    "scores": None
                    if j.scores is None
                    else {f: getattr(j.scores, f) for f in JUDGE_FIELDS},
                    "rationale": "" if j.scores is None else j.scores.rationale,
                },
            }
        runs[s.label] = per_case
    return {
        "cases": [_case_json(c) for c in case_list],
        "systems": [
            {"label": s.label, "expert": s.expert, "strategy": s.strategy, "group": s.group}
            for s in systems
        ],
        "runs": runs,
    }
