"""What the report shows: systems (table rows) and the sections of metric columns.

The metrics themselves (columns, their order, direction and the tables they appear in) are
declared in :mod:`lecode.metrics.declared` and chosen by tag with
:func:`lecode.metrics.registry.with_tag`. :class:`Metric` is the column type every table takes
(defined in :mod:`lecode.columns`, imported here for the report's modules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lecode.columns import Direction as Direction
from lecode.columns import Metric as Metric
from lecode.columns import Section as Section

ZERO_SHOT = "zero_shot"
FEW_SHOT = "few_shot"

SECTION_TITLES: dict[str, str] = {
    "effectiveness": "Effe.",
    "efficiency": "Effi.",
    "auto": "Auto.",
    "llm": "LLM-Eval.",
}


def system_key(expert: str, strategy: str) -> str:
    """How provenance documents name a system (one table row's configuration)."""
    return f"{expert}/{strategy}"


@dataclass(frozen=True)
class ReportedSystem:
    """One evaluated system as the report shows it: an expert model run with one strategy,
    shown under ``label`` in ``group`` (the settings' systems, or mappings, coerced)."""

    expert: str
    strategy: str
    label: str
    group: str = ""
    paper_label: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.expert, self.strategy)

    @property
    def id(self) -> str:
        """The system's key in provenance documents, ``expert/strategy``."""
        return system_key(self.expert, self.strategy)

    @classmethod
    def coerce(cls, value: ReportedSystem | Mapping[str, Any]) -> ReportedSystem:
        if isinstance(value, ReportedSystem):
            return value
        allowed = {"expert", "strategy", "label", "group", "paper_label"}
        unknown = set(value) - allowed
        if unknown:
            raise ValueError(f"unknown system keys: {sorted(unknown)}")
        label = value.get("label") or f"{value['expert']} ({value['strategy']})"
        return cls(
            expert=str(value["expert"]),
            strategy=str(value["strategy"]),
            label=str(label),
            group=str(value.get("group") or ""),
            paper_label=value.get("paper_label"),
        )


def coerce_systems(systems: Iterable[ReportedSystem | Mapping[str, Any]]) -> list[ReportedSystem]:
    """Systems as :class:`ReportedSystem`, checking that keys and labels are unique."""
    out = [ReportedSystem.coerce(s) for s in systems]
    keys = [s.key for s in out]
    labels = [s.label for s in out]
    if len(set(keys)) != len(keys):
        raise ValueError("two systems share the same (expert, strategy)")
    if len(set(labels)) != len(labels):
        raise ValueError("two systems share the same label")
    return out


def grouped(systems: Sequence[ReportedSystem]) -> list[tuple[str, list[ReportedSystem]]]:
    """Systems by group, groups in order of first appearance, systems in given order."""
    order: list[str] = []
    by: dict[str, list[ReportedSystem]] = {}
    for s in systems:
        if s.group not in by:
            order.append(s.group)
            by[s.group] = []
        by[s.group].append(s)
    return [(g, by[g]) for g in order]
