"""Our numbers beside the paper's, for the systems the paper reports."""

from __future__ import annotations

from lecode.report.tabledecl import MetricColumns, NoteContext, TableDeclaration, coverage_note


def _source(ctx: NoteContext) -> str:
    return f"paper: {ctx.paper_source}"


DECLARED = (
    TableDeclaration(
        name="comparison",
        title="Our numbers beside the paper's",
        order=90,
        rows="paper",
        columns=MetricColumns(tag="table3"),
        notes=(
            _source,
            "ours ± half-width of our bootstrap interval; ours − paper shifts that interval",
            "(n.s.) the paper's value lies inside our interval",
            coverage_note,
        ),
        rank=False,
        description="ours, the paper's and ours − paper per metric tagged table3",
    ),
)
