"""A person's check of the identified roles, before stage 1.

The review export lists the doubtful dialogues in ``roles_to_check.csv`` (columns ``id,
speaker, role, confidence, reason``). A reviewer writes the right roles of a dialogue, one row
per speaker label, into ``<review_dir>/roles.csv`` (columns ``id, speaker, role`` and
optionally ``reviewer, comment``; role 用户 or 律师); the roles step of that dialogue's shard
then uses them, and the dialogue's flags are cleared.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from lecode.corpus.annotations import SPEAKER_ZH, ZH_SPEAKER, RoleAnnotation
from lecode.records import Speaker

ROLES_FILE = "roles.csv"
ROLES_COLUMNS = ("id", "speaker", "role")
OPTIONAL_COLUMNS = ("reviewer", "comment")
CHECK_FILE = "roles_to_check.csv"
CHECK_COLUMNS = ("id", "speaker", "role", "confidence", "reason", "source")


class RolesFileError(ValueError):
    pass


def bom_csv(rows: Sequence[Sequence[object]]) -> str:
    """CSV text with a byte-order mark (spreadsheet programs then read the Chinese right)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return "\ufeff" + buf.getvalue()


def read_roles_file(
    path: str | Path, known_ids: set[str] | None = None
) -> dict[str, dict[str, Speaker]]:
    """``{dialogue id: {speaker label: role}}``; every problem named with file, line, field."""
    p = Path(path)
    problems: list[str] = []
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RolesFileError(f"{p}:0: field '<encoding>': not UTF-8 ({exc})") from None
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    if header[:3] != list(ROLES_COLUMNS):
        raise RolesFileError(f"{p}:1: field '<header>': expected columns {','.join(ROLES_COLUMNS)}")
    extra = [h for h in header[3:] if h not in OPTIONAL_COLUMNS]
    if extra:
        raise RolesFileError(
            f"{p}:1: field {extra[0]!r}: unknown column (allowed: {OPTIONAL_COLUMNS})"
        )
    out: dict[str, dict[str, Speaker]] = {}
    for lineno, raw in enumerate(reader, start=2):
        if not any(c.strip() for c in raw):
            continue
        did, label, role = (c.strip() for c in [*raw, "", "", ""][:3])
        if known_ids is not None and did not in known_ids:
            problems.append(f"{p}:{lineno}: field 'id': no transcript {did!r}")
            continue
        if not label:
            problems.append(f"{p}:{lineno}: field 'speaker': empty")
            continue
        if role not in ZH_SPEAKER:
            problems.append(f"{p}:{lineno}: field 'role': {role!r} is not 用户 or 律师")
            continue
        if label in out.get(did, {}):
            problems.append(f"{p}:{lineno}: field 'speaker': {label!r} of {did!r} appears twice")
            continue
        out.setdefault(did, {})[label] = ZH_SPEAKER[role]
    if problems:
        raise RolesFileError("\n  ".join(problems))
    return out


def roles_to_check(records: Sequence[RoleAnnotation]) -> str:
    rows: list[Sequence[object]] = [CHECK_COLUMNS]
    for r in records:
        if not r.flags:
            continue
        for label, role in r.roles.items():
            rows.append((r.id, label, SPEAKER_ZH[role], r.confidence, "; ".join(r.flags), r.source))
    return bom_csv(rows)
