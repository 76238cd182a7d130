"""Which model answered: the model ids and fingerprints the endpoints reported, per system.

An undated alias (``deepseek-chat``) is served by whatever model the provider puts behind it
that day, so a table row names its model only together with what the endpoint said it was.
Each transcript counts, per role, the model id and ``system_fingerprint`` of every reply
(:class:`lecode.records.Served`); the tables' provenance sums them per system and role
(``SystemInfo.served``), and this module words the note that goes under Table 3 when a served
id differs from the configured one or changes within the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from lecode.records import Served, Transcript

if TYPE_CHECKING:
    from lecode.report.document import Provenance


def served_by_role(transcripts: Iterable[Transcript]) -> dict[str, Served]:
    """Role -> the summed :class:`Served` counts of that role's replies in ``transcripts``."""
    out: dict[str, Served] = {}
    for t in transcripts:
        for role, served in t.served.items():
            out[role] = out.get(role, Served()) + served
    return dict(sorted(out.items()))


def _counts(values: Mapping[str, int]) -> str:
    ordered = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k or '(none)'} ×{n}" for k, n in ordered)


def served_lines(served: Mapping[str, Served]) -> list[str]:
    """Per role, one line: the model ids and fingerprints its replies named, with counts."""
    return [
        f"{role}: model {_counts(s.models)}; fingerprint {_counts(s.fingerprints)}"
        for role, s in served.items()
    ]


def served_note(label: str, configured: str, served: Served) -> str | None:
    """The note for one system, or None when every reply named the configured model id (or
    none) and one fingerprint (or none)."""
    models = {m: n for m, n in served.models.items() if m}
    prints = {f: n for f, n in served.fingerprints.items() if f}
    parts = []
    if any(m != configured for m in models):
        parts.append(f"configured model id {configured}, replies named {_counts(models)}")
    if len(prints) > 1:
        parts.append(f"the system_fingerprint changed within the run: {_counts(prints)}")
    if not parts:
        return None
    return f"{label}: " + "; ".join(parts) + "."


def served_notes(
    provenance: Provenance, system_ids: Iterable[str], role: str = "expert"
) -> list[str]:
    """One note per system (of ``system_ids``, in that order) whose ``role`` was answered by
    another model id than configured, or whose model id or fingerprint changed in the run."""
    notes = []
    for sid in system_ids:
        info = provenance.systems.get(sid)
        if info is None or role not in info.served or role not in info.roles:
            continue
        entry = info.roles[role]
        configured = str(entry.entry.get("model") or entry.model)
        note = served_note(info.system.label or sid, configured, info.served[role])
        if note is not None:
            notes.append(note)
    return notes
