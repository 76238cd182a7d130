"""Which model answered: the model ids and fingerprints the endpoints reported, per system.

An undated alias (``deepseek-chat``) is served by whatever model the provider puts behind it
that day, so a table row names its model only together with what the endpoint said it was.
Each transcript counts, per role, the model id and ``system_fingerprint`` of every reply
(:class:`lecode.records.Served`); this module sums them per system and words the note that
goes under the table when a served id differs from the configured one or changes in a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lecode.records import Served, Transcript

SystemKey = tuple[str, str]


def served_by_system(
    transcripts: Iterable[Transcript], role: str = "expert"
) -> dict[SystemKey, Served]:
    """``(expert, strategy)`` -> the summed :class:`Served` counts of ``role``'s replies."""
    out: dict[SystemKey, Served] = {}
    for t in transcripts:
        served = t.served.get(role)
        if served is not None:
            key = (t.expert, t.strategy)
            out[key] = out.get(key, Served()) + served
    return out


def _counts(values: Mapping[str, int]) -> str:
    return ", ".join(
        f"{k or '(none)'} ×{n}" for k, n in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def served_note(label: str, configured: str, served: Served) -> str | None:
    """The note for one system, or None when every reply named the configured model id (or
    none) and one fingerprint (or none)."""
    models = {m: n for m, n in served.models.items() if m}
    prints = {f: n for f, n in served.fingerprints.items() if f}
    other = sorted(m for m in models if m != configured)
    parts = []
    if other:
        parts.append(f"configured model id {configured}, replies named {_counts(models)}")
    elif len(models) > 1:
        parts.append(f"replies named {_counts(models)}")
    if len(prints) > 1:
        parts.append(f"the system_fingerprint changed within the run: {_counts(prints)}")
    if not parts:
        return None
    return f"{label}: " + "; ".join(parts) + "."


def served_notes(
    served: Mapping[SystemKey, Served],
    configured: Mapping[SystemKey, str],
    labels: Mapping[SystemKey, str],
) -> list[str]:
    """One note per system whose served model differs from its configured id or changed,
    in the order of ``labels``."""
    notes = []
    for key, label in labels.items():
        if key in served and key in configured:
            note = served_note(label, configured[key], served[key])
            if note is not None:
                notes.append(note)
    return notes


def served_provenance(served: Served, configured: str) -> dict[str, object]:
    """The provenance entry of one system: configured id, every reported id and fingerprint
    with its count."""
    return {
        "configured_model": configured,
        "reported_models": dict(sorted(served.models.items())),
        "system_fingerprints": dict(sorted(served.fingerprints.items())),
    }
