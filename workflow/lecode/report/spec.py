"""What the report shows: systems (table rows) and metrics (table columns).

Direction of AT (average clarifying turns): the paper prints AT without a direction in Table 3
but as ``Avg T ↓`` in Table 6. We follow Table 6: AT is ranked lower-is-better, and every table
header shows it as ``AT↓`` so the choice is visible. Note that a system asking no question at all
would then rank best on AT; read AT together with R/WR. ``direction=None`` disables ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["higher", "lower"]
Section = Literal["effectiveness", "efficiency", "auto", "llm"]

ZERO_SHOT = "zero_shot"
FEW_SHOT = "few_shot"


@dataclass(frozen=True)
class Metric:
    """One reported column: score column, header, display scale and ranking direction."""

    key: str
    header: str
    scale: float
    direction: Direction | None
    section: Section

    @property
    def display_header(self) -> str:
        return self.header + ("↓" if self.direction == "lower" else "")


def _m(
    key: str, header: str, scale: float, section: Section, d: Direction | None = "higher"
) -> Metric:
    return Metric(key, header, scale, d, section)


#: Table 3 columns, in the paper's order. Fractions x100, judge scores (1..10) x10, AT raw.
METRICS: tuple[Metric, ...] = (
    _m("recall", "R", 100.0, "effectiveness"),
    _m("weighted_recall", "WR", 100.0, "effectiveness"),
    _m("recall_at_5", "R@5", 100.0, "effectiveness"),
    _m("ndcg", "NDCG", 100.0, "effectiveness"),
    _m("turns", "AT", 1.0, "efficiency", "lower"),
    _m("rouge_l", "R-L", 100.0, "auto"),
    _m("bertscore_f1", "BS", 100.0, "auto"),
    _m("professionalism", "Pro", 10.0, "llm"),
    _m("fluency", "Flu", 10.0, "llm"),
    _m("completeness", "Com", 10.0, "llm"),
    _m("satisfaction", "Sat", 10.0, "llm"),
    _m("safety", "Safe", 10.0, "llm"),
    _m("overall", "OA", 10.0, "llm"),
)
METRIC_BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}

#: Table 6 (clarification) and Table 7 (advice quality) columns.
CLARIFICATION: tuple[Metric, ...] = METRICS[:5]
ADVICE: tuple[Metric, ...] = METRICS[5:]

#: Metrics not in the paper's tables but in the score records, reported in metrics JSON only.
EXTRA_METRICS: tuple[Metric, ...] = (_m("ndcg_gold", "NDCG-gold", 100.0, "effectiveness"),)

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
class System:
    """One evaluated system: an expert model run with one strategy, shown under ``label``."""

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
    def coerce(cls, value: System | Mapping[str, Any]) -> System:
        if isinstance(value, System):
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


def coerce_systems(systems: Iterable[System | Mapping[str, Any]]) -> list[System]:
    """Systems as :class:`System`, checking that keys and labels are unique."""
    out = [System.coerce(s) for s in systems]
    keys = [s.key for s in out]
    labels = [s.label for s in out]
    if len(set(keys)) != len(keys):
        raise ValueError("two systems share the same (expert, strategy)")
    if len(set(labels)) != len(labels):
        raise ValueError("two systems share the same label")
    return out


def grouped(systems: Sequence[System]) -> list[tuple[str, list[System]]]:
    """Systems by group, groups in order of first appearance, systems in given order."""
    order: list[str] = []
    by: dict[str, list[System]] = {}
    for s in systems:
        if s.group not in by:
            order.append(s.group)
            by[s.group] = []
        by[s.group].append(s)
    return [(g, by[g]) for g in order]
