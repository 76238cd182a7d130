"""Table 7: advice quality, zero-shot vs few-shot."""

from __future__ import annotations

from lecode.report.declared.table6 import SHOT_NOTES
from lecode.report.tabledecl import MetricColumns, TableDeclaration

DECLARED = (
    TableDeclaration(
        name="table7",
        title="Advice quality, zero-shot (ZS) vs few-shot (FS)",
        order=40,
        rows="shot_pairs",
        columns=MetricColumns(tag="table7"),
        notes=SHOT_NOTES,
        description="the metrics tagged table7, ZS and FS rows per expert and their difference",
    ),
)
