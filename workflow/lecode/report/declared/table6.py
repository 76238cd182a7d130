"""Table 6: clarification capability, zero-shot vs few-shot."""

from __future__ import annotations

from lecode.report.tabledecl import (
    MetricColumns,
    TableDeclaration,
    coverage_note,
    delta_note,
    interval_note,
    rank_note,
    scale_note,
)

#: The notes of both zero-shot vs few-shot tables.
SHOT_NOTES = (
    "ZS zero-shot, FS few-shot; Δ FS−ZS paired difference",
    interval_note,
    coverage_note,
    rank_note,
    delta_note,
    scale_note,
)

DECLARED = (
    TableDeclaration(
        name="table6",
        title="Clarification capability, zero-shot (ZS) vs few-shot (FS)",
        order=30,
        rows="shot_pairs",
        columns=MetricColumns(tag="table6"),
        notes=SHOT_NOTES,
        description="the metrics tagged table6, ZS and FS rows per expert and their difference",
    ),
)
