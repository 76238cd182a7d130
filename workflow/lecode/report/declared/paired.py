"""The paired differences: every system of Table 3 against the reference system."""

from __future__ import annotations

from lecode.report.tabledecl import (
    MetricColumns,
    NoteContext,
    TableDeclaration,
    compared_note,
    coverage_note,
    delta_note,
    interval_note,
)


def _each_row(ctx: NoteContext) -> str:
    return f"each row: system − {ctx.reference}, on the display scale"


def _coverage(ctx: NoteContext) -> str:
    return coverage_note(ctx) + " (n = common cases)"


DECLARED = (
    TableDeclaration(
        name="paired",
        title="Paired differences against {reference}",
        order=20,
        rows="paired",
        columns=MetricColumns(tag="table3"),
        notes=(_each_row, interval_note, delta_note, _coverage, compared_note),
        rank=False,
        description="each system of Table 3 minus the reference, per metric tagged table3",
    ),
)
