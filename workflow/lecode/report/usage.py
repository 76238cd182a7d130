"""Per-role cost and usage summary (expert / client / matcher / judge) per system."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

import polars as pl

from lecode.records import Judgement, Matches, Transcript
from lecode.report.render import PlainTable, md_text
from lecode.report.spec import ReportedSystem

USAGE_FIELDS = (
    "calls",
    "cached",
    "retries",
    "prompt_tokens",
    "cached_prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cost",
    # how the protocol handled replies (see lecode.records.RoleUsage)
    "unmarked_reasks",
    "unmarked_advice",
    "unmarked_questions",
    "read_after_preamble",
    "read_anywhere",
    "read_two_moves",
    "confidence_failures",
)
USAGE_SCHEMA: dict[str, type[pl.DataType]] = {
    "expert": pl.Utf8,
    "strategy": pl.Utf8,
    "case_id": pl.Utf8,
    "role": pl.Utf8,
    **{f: pl.Float64 if f == "cost" else pl.Int64 for f in USAGE_FIELDS},
}


def usage_frame(
    transcripts: Iterable[Transcript] = (),
    matches: Iterable[Matches] = (),
    judgements: Iterable[Judgement] = (),
) -> pl.DataFrame:
    """One row per (record, role) from the records' ``usage`` ledgers."""
    rows = []
    for records in (transcripts, matches, judgements):
        for rec in records:
            for role, u in rec.usage.items():
                rows.append(
                    {
                        "expert": rec.expert,
                        "strategy": rec.strategy,
                        "case_id": rec.case_id,
                        "role": role,
                        **{f: getattr(u, f) for f in USAGE_FIELDS},
                    }
                )
    return pl.DataFrame(rows, schema=USAGE_SCHEMA, orient="row")


ALL_SYSTEMS = "all systems"
#: Columns of :func:`usage_summary` that are not printed (the row's system key, "" for all).
HIDDEN = ("system",)


def usage_summary(usage: pl.DataFrame, systems: Sequence[ReportedSystem]) -> pl.DataFrame:
    """Sums per system and role, then per role over all systems (label ``all systems``).

    Columns: ``system`` (the system's key, empty on the ``all systems`` rows), ``label``,
    ``role``, ``dialogues`` and the sums of :data:`USAGE_FIELDS`.
    """
    labels = pl.DataFrame(
        {
            "expert": [s.expert for s in systems],
            "strategy": [s.strategy for s in systems],
            "system": [s.id for s in systems],
            "label": [s.label for s in systems],
            "order": list(range(len(systems))),
        },
        schema={
            "expert": pl.Utf8,
            "strategy": pl.Utf8,
            "system": pl.Utf8,
            "label": pl.Utf8,
            "order": pl.Int64,
        },
    )
    present = [f for f in USAGE_FIELDS if f in usage.columns]
    sums = [pl.col(f).sum() for f in present]
    if "case_id" in usage.columns:
        dialogues = pl.struct("expert", "strategy", "case_id").n_unique().alias("dialogues")
    else:
        dialogues = pl.len().alias("dialogues")
    per = (
        usage.join(labels, on=["expert", "strategy"], how="inner")
        .group_by("order", "system", "label", "role")
        .agg(dialogues, *sums)
    )
    total = (
        usage.join(labels, on=["expert", "strategy"], how="inner")
        .group_by("role")
        .agg(dialogues, *sums)
        .with_columns(
            pl.lit("").alias("system"),
            pl.lit(ALL_SYSTEMS).alias("label"),
            pl.lit(len(systems)).alias("order"),
        )
    )
    out = pl.concat([per, total.select(per.columns)], how="vertical_relaxed")
    return out.sort("order", "role").drop("order")


def usage_text(column: str, value: object) -> str:
    """A usage table cell as printed: cost to 4 decimals, counts with thousands separators,
    — where a column does not apply to the row (the audit's count on non-client rows)."""
    if value is None:
        return "—"
    if column == "cost" and isinstance(value, int | float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render_usage_markdown(table: PlainTable) -> str:
    """The usage table as Markdown: label, role and each cell as its document prints it."""
    cols = [table.row_header, table.setting_header, *(c.key for c in table.columns)]
    lines = [
        f"### {table.title}",
        "",
        "| " + " | ".join(md_text(c) for c in cols) + " |",
        "|" + "|".join([":--", ":--"] + ["--:"] * (len(cols) - 2)) + "|",
    ]
    for r in table.rows:
        cells = [r.label, r.setting, *(c.display for c in r.cells)]
        lines.append("| " + " | ".join(md_text(x) for x in cells) + " |")
    lines.append("")
    lines.extend(f"- {note}" for note in table.notes)
    return "\n".join(lines) + "\n"


def render_usage_csv(table: PlainTable) -> str:
    """The usage table as CSV: label, role and the sums, costs to 6 decimals."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([table.row_header, table.setting_header, *(c.key for c in table.columns)])
    for r in table.rows:
        values = [c.value for c in r.cells]
        w.writerow(
            [
                r.label,
                r.setting,
                *("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in values),
            ]
        )
    return buf.getvalue()
