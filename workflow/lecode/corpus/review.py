"""The human review round trip: one CSV spreadsheet per dialogue and stage.

Export (:func:`export_review`) writes ``<id>.stage1.csv`` and ``<id>.stage2.csv`` for every
pre-annotated dialogue (UTF-8 with a byte-order mark, so Excel, WPS and LibreOffice open the
Chinese text correctly). Reviewers copy them into ``<review_dir>/<reviewer>/`` and edit them:

- stage 1: one row per utterance, columns ``row, speaker, text, intent``. Edit speaker (用户 /
  律师), text and intent (the number, optionally followed by its name); delete rows; add rows
  with an empty ``row``; the row order is the dialogue order.
- stage 2: columns ``field, row, text, importance``; ``field`` is ``initial_query``, ``fact``
  (one row per atomic fact, importance 1-3), ``suggestion``, ``case_type`` or ``charge_type``
  (types separated by ``;``). Facts are edited, deleted or added (empty ``row``) the same way.

Both sheets end with a ``comment`` column (``备注`` is read the same way): a reviewer's note on
the row, kept in the change records. Any other extra column stops the import, naming it.

Import (:func:`import_review`) reads a reviewer's files back into annotation records and
records, for every field of every row, whether the reviewer changed it (:class:`FieldChange`):
``row`` ties a reviewed row to the pre-annotated one it started from.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lecode.corpus.annotations import (
    SPEAKER_ZH,
    ZH_SPEAKER,
    AnnotatedUtterance,
    KeyFact,
    Stage1Annotation,
    Stage2Annotation,
)
from lecode.recordio import atomic_write_text
from lecode.records import INTENT_LABELS

STAGE1_COLUMNS = ("row", "speaker", "text", "intent")
STAGE2_COLUMNS = ("field", "row", "text", "importance")
STAGE2_FIELDS = ("initial_query", "fact", "suggestion", "case_type", "charge_type")
#: The optional last column of a sheet, and the names it is read under.
COMMENT = "comment"
COMMENT_NAMES = ("comment", "备注", "note", "notes")
_LEADING_INT = re.compile(r"^\s*\[?(\d+)\]?")


@dataclass(frozen=True)
class FieldChange:
    """Whether a reviewer changed one field of one row (``row``: the pre-annotated row; -1 for
    a row the reviewer added; ``kind``: kept, edited, added, deleted)."""

    reviewer: str
    dialogue: str
    stage: int
    row: int
    field: str
    changed: bool
    kind: str
    before: str
    after: str
    comment: str = ""


class ReviewError(ValueError):
    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"{len(problems)} problem(s) in the reviewed files:\n  " + "\n  ".join(problems[:50])
        )


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return "\ufeff" + buf.getvalue()


def stage1_csv(s: Stage1Annotation) -> str:
    rows: list[Sequence[Any]] = [(*STAGE1_COLUMNS, COMMENT)]
    for k, u in enumerate(s.dialogue):
        rows.append((k, SPEAKER_ZH[u.speaker], u.text, f"{u.intent} {INTENT_LABELS[u.intent]}", ""))
    return _csv(rows)


def stage2_csv(s: Stage2Annotation) -> str:
    rows: list[Sequence[Any]] = [
        (*STAGE2_COLUMNS, COMMENT),
        ("initial_query", "", s.initial_query, "", ""),
    ]
    rows += [("fact", k, f.text, f.importance, "") for k, f in enumerate(s.facts)]
    rows.append(("suggestion", "", s.suggestion, "", ""))
    rows.append(("case_type", "", ";".join(s.case_type), "", ""))
    rows.append(("charge_type", "", ";".join(s.charge_type), "", ""))
    return _csv(rows)


def export_review(
    stage1: Sequence[Stage1Annotation], stage2: Sequence[Stage2Annotation], out_dir: str | Path
) -> list[Path]:
    out = Path(out_dir)
    written = []
    for s in stage1:
        written.append(out / f"{s.id}.stage1.csv")
        atomic_write_text(written[-1], stage1_csv(s))
    for s2 in stage2:
        written.append(out / f"{s2.id}.stage2.csv")
        atomic_write_text(written[-1], stage2_csv(s2))
    return written


# -- import -----------------------------------------------------------------------------------


def _rows(
    path: Path, columns: Sequence[str], problems: list[str]
) -> list[tuple[int, dict[str, str]]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(f"{path}:0: field '<encoding>': not UTF-8 ({exc}); save as CSV UTF-8")
        return []
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or [h.strip() for h in header[: len(columns)]] != list(columns):
        problems.append(f"{path}:1: field '<header>': expected columns {','.join(columns)}")
        return []
    extra = [h.strip() for h in header[len(columns) :]]
    while extra and not extra[-1]:
        extra.pop()
    comment_at = None
    for k, name in enumerate(extra):
        if name.lower() in COMMENT_NAMES and comment_at is None:
            comment_at = len(columns) + k
        else:
            problems.append(
                f"{path}:1: field {name!r}: unknown column (its values would be lost); the "
                f"sheet has {','.join(columns)} and an optional {COMMENT} (备注)"
            )
            return []
    out = []
    for lineno, raw in enumerate(reader, start=2):
        if not any(c.strip() for c in raw):
            continue
        cells = [*raw, *[""] * len(columns)][: len(columns)]
        row = {c: v.strip() for c, v in zip(columns, cells, strict=True)}
        row[COMMENT] = (
            raw[comment_at].strip() if comment_at is not None and comment_at < len(raw) else ""
        )
        beyond = [c for c in raw[len(columns) + len(extra) :] if c.strip()]
        if beyond:
            problems.append(
                f"{path}:{lineno}: field '<column {len(columns) + len(extra) + 1}>': a value "
                f"outside the sheet's columns: {beyond[0][:30]!r}"
            )
            continue
        out.append((lineno, row))
    return out


def _row_id(value: str, where: str, problems: list[str], n: int) -> int | None:
    if not value:
        return None
    if not value.isdigit() or int(value) >= n:
        problems.append(f"{where}: field 'row': {value!r} is not a row of the pre-annotation")
        return None
    return int(value)


def import_stage1(
    path: Path, pre: Stage1Annotation, reviewer: str
) -> tuple[Stage1Annotation, list[FieldChange]]:
    problems: list[str] = []
    rows = [(f"{path}:{n}", row) for n, row in _rows(path, STAGE1_COLUMNS, problems)]
    if problems:
        raise ReviewError(problems)
    return stage1_from_rows(rows, f"{path}:2", pre, reviewer)


def stage1_from_rows(
    rows: Sequence[tuple[str, dict[str, str]]], origin: str, pre: Stage1Annotation, reviewer: str
) -> tuple[Stage1Annotation, list[FieldChange]]:
    """A reviewed stage-1 record and its change records from rows ``(where, {row, speaker,
    text, intent, comment})`` in dialogue order (a sheet's, or a Label Studio annotation's)."""
    problems: list[str] = []
    dialogue: list[AnnotatedUtterance] = []
    changes: list[FieldChange] = []
    seen: set[int] = set()
    for where, row in rows:
        rid = _row_id(row["row"], where, problems, len(pre.dialogue))
        speaker = ZH_SPEAKER.get(row["speaker"])
        if speaker is None:
            problems.append(f"{where}: field 'speaker': {row['speaker']!r} is not 用户 or 律师")
            continue
        m = _LEADING_INT.match(row["intent"])
        if m is None or int(m.group(1)) not in INTENT_LABELS:
            problems.append(f"{where}: field 'intent': {row['intent']!r} is not an intent 1-10")
            continue
        try:
            u = AnnotatedUtterance(speaker=speaker, text=row["text"], intent=int(m.group(1)))
        except ValidationError as exc:
            msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
            problems.append(f"{where}: field 'intent': {msg}")
            continue
        dialogue.append(u)
        if rid is not None and rid in seen:
            problems.append(f"{where}: field 'row': row {rid} appears twice")
            continue
        before = pre.dialogue[rid] if rid is not None else None
        if rid is not None:
            seen.add(rid)
        for field in ("speaker", "text", "intent"):
            after_v = str(getattr(u, field))
            before_v = str(getattr(before, field)) if before is not None else ""
            kind = "added" if before is None else ("edited" if after_v != before_v else "kept")
            changes.append(
                FieldChange(
                    reviewer,
                    pre.id,
                    1,
                    -1 if rid is None else rid,
                    field,
                    kind != "kept",
                    kind,
                    before_v,
                    after_v,
                    row[COMMENT],
                )
            )
    for k, u in enumerate(pre.dialogue):
        if k not in seen:
            for field in ("speaker", "text", "intent"):
                changes.append(
                    FieldChange(
                        reviewer, pre.id, 1, k, field, True, "deleted", str(getattr(u, field)), ""
                    )
                )
    if not problems and not dialogue:
        problems.append(f"{origin}: field 'text': the dialogue is empty")
    if problems:
        raise ReviewError(problems)
    return Stage1Annotation(id=pre.id, annotator=reviewer, dialogue=tuple(dialogue)), changes


def import_stage2(
    path: Path, pre: Stage2Annotation, reviewer: str
) -> tuple[Stage2Annotation, list[FieldChange]]:
    problems: list[str] = []
    rows = [(f"{path}:{n}", row) for n, row in _rows(path, STAGE2_COLUMNS, problems)]
    if problems:
        raise ReviewError(problems)
    return stage2_from_rows(rows, str(path), pre, reviewer)


def stage2_from_rows(
    rows: Sequence[tuple[str, dict[str, str]]], path: str, pre: Stage2Annotation, reviewer: str
) -> tuple[Stage2Annotation, list[FieldChange]]:
    """A reviewed stage-2 record and its change records from rows ``(where, {field, row,
    text, importance, comment})``."""
    problems: list[str] = []
    changes: list[FieldChange] = []
    values: dict[str, str] = {}
    facts: list[KeyFact] = []
    seen: set[int] = set()

    comments: dict[str, str] = {}

    def change(row: int, field: str, kind: str, before: str, after: str, note: str = "") -> None:
        changes.append(
            FieldChange(reviewer, pre.id, 2, row, field, kind != "kept", kind, before, after, note)
        )

    for where, row in rows:
        field = row["field"]
        if field not in STAGE2_FIELDS:
            problems.append(f"{where}: field 'field': {field!r} is not one of {STAGE2_FIELDS}")
            continue
        if field != "fact":
            if field in values:
                problems.append(f"{where}: field 'field': {field} appears twice")
            values[field] = row["text"]
            comments[field] = row[COMMENT]
            continue
        rid = _row_id(row["row"], where, problems, len(pre.facts))
        if row["importance"] not in ("1", "2", "3"):
            problems.append(f"{where}: field 'importance': {row['importance']!r} is not 1, 2 or 3")
            continue
        if not row["text"]:
            problems.append(f"{where}: field 'text': empty fact (delete the row instead)")
            continue
        fact = KeyFact(text=row["text"], importance=int(row["importance"]))
        facts.append(fact)
        if rid is not None and rid in seen:
            problems.append(f"{where}: field 'row': fact {rid} appears twice")
            continue
        note = row[COMMENT]
        if rid is None:
            change(-1, "fact.text", "added", "", fact.text, note)
            change(-1, "fact.importance", "added", "", str(fact.importance), note)
            continue
        seen.add(rid)
        old = pre.facts[rid]
        change(
            rid,
            "fact.text",
            "edited" if old.text != fact.text else "kept",
            old.text,
            fact.text,
            note,
        )
        change(
            rid,
            "fact.importance",
            "edited" if old.importance != fact.importance else "kept",
            str(old.importance),
            str(fact.importance),
            note,
        )
    for k, old in enumerate(pre.facts):
        if k not in seen:
            change(k, "fact.text", "deleted", old.text, "")
            change(k, "fact.importance", "deleted", str(old.importance), "")
    for field in ("initial_query", "suggestion"):
        if not values.get(field):
            problems.append(f"{path}: field {field!r}: missing or empty")
    if not facts:
        problems.append(f"{path}: field 'fact': no facts")
    if problems:
        raise ReviewError(problems)

    def types_of(field: str, pre_value: tuple[str, ...]) -> tuple[str, ...]:
        if field not in values:  # a sheet from before the field existed: the pre-annotation's
            return pre_value
        return tuple(t.strip() for t in values[field].split(";") if t.strip())

    types = types_of("case_type", pre.case_type)
    charges = types_of("charge_type", pre.charge_type)
    for field, before, after in (
        ("initial_query", pre.initial_query, values["initial_query"]),
        ("suggestion", pre.suggestion, values["suggestion"]),
        ("case_type", ";".join(pre.case_type), ";".join(types)),
        ("charge_type", ";".join(pre.charge_type), ";".join(charges)),
    ):
        change(
            -1 if field != "initial_query" else 0,
            field,
            "edited" if before != after else "kept",
            before,
            after,
            comments.get(field, ""),
        )
    reviewed = Stage2Annotation(
        id=pre.id,
        annotator=reviewer,
        initial_query=values["initial_query"],
        facts=tuple(facts),
        suggestion=values["suggestion"],
        case_type=types,
        charge_type=charges,
    )
    return reviewed, changes


@dataclass
class Review:
    """One reviewer's imported files: reviewed records by dialogue id, and every field's
    change record."""

    reviewer: str
    stage1: dict[str, Stage1Annotation]
    stage2: dict[str, Stage2Annotation]
    changes: list[FieldChange]


def import_review(
    files: Sequence[str | Path],
    reviewer: str,
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
) -> Review:
    """A reviewer's files (``<id>.stage1.csv`` / ``<id>.stage2.csv``); every problem of every
    file in one :class:`ReviewError`."""
    review = Review(reviewer, {}, {}, [])
    problems: list[str] = []
    for f in sorted(Path(p) for p in files):
        m = re.match(r"^(.+)\.stage([12])\.csv$", f.name)
        if m is None:
            problems.append(f"{f}:0: field '<file name>': expected <id>.stage1.csv or .stage2.csv")
            continue
        did, stage = m.group(1), int(m.group(2))
        pre = (pre1 if stage == 1 else pre2).get(did)
        if pre is None:
            problems.append(f"{f}:0: field 'id': no pre-annotated dialogue {did!r}")
            continue
        try:
            if stage == 1:
                rec1, ch = import_stage1(f, pre, reviewer)  # type: ignore[arg-type]
                review.stage1[did] = rec1
            else:
                rec2, ch = import_stage2(f, pre, reviewer)  # type: ignore[arg-type]
                review.stage2[did] = rec2
        except ReviewError as exc:
            problems.extend(exc.problems)
            continue
        review.changes.extend(ch)
    if problems:
        raise ReviewError(problems)
    return review
