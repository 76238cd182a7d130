"""Table 3: main results, one ranked row per system (the paper's zero-shot table)."""

from __future__ import annotations

from lecode.report.tabledecl import (
    MetricColumns,
    TableDeclaration,
    coverage_note,
    interval_note,
    rank_note,
    scale_note,
)

DECLARED = (
    TableDeclaration(
        name="table3",
        title="Main results (per-dialogue means over the test cases)",
        order=10,
        rows="systems",
        columns=MetricColumns(tag="table3"),
        notes=(interval_note, coverage_note, rank_note, scale_note),
        description="the metrics tagged table3, mean per system over the test cases",
    ),
)
