"""Per-role cost and usage summary (expert / client / matcher / judge) per system."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

import polars as pl

from lecode.records import Judgement, Matches, Transcript
from lecode.report.render import md_text
from lecode.report.spec import System

USAGE_FIELDS = (
    "calls",
    "cached",
    "retries",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cost",
    # how the protocol handled replies (see lecode.records.RoleUsage)
    "unmarked_reasks",
    "unmarked_advice",
    "unmarked_questions",
    "confidence_failures",
)
USAGE_SCHEMA: dict[str, type[pl.DataType]] = {
    "expert": pl.Utf8,
    "strategy": pl.Utf8,
    "case_id": pl.Utf8,
    "role": pl.Utf8,
    "calls": pl.Int64,
    "cached": pl.Int64,
    "retries": pl.Int64,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "reasoning_tokens": pl.Int64,
    "cost": pl.Float64,
    "unmarked_reasks": pl.Int64,
    "unmarked_advice": pl.Int64,
    "unmarked_questions": pl.Int64,
    "confidence_failures": pl.Int64,
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


def usage_summary(usage: pl.DataFrame, systems: Sequence[System]) -> pl.DataFrame:
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


def render_usage_markdown(summary: pl.DataFrame) -> str:
    summary = summary.drop([c for c in HIDDEN if c in summary.columns])
    cols = list(summary.columns)
    lines = [
        "### Usage and cost per role",
        "",
        "| " + " | ".join(md_text(c) for c in cols) + " |",
        "|" + "|".join([":--", ":--"] + ["--:"] * (len(cols) - 2)) + "|",
    ]
    for row in summary.iter_rows(named=True):
        lines.append("| " + " | ".join(md_text(usage_text(c, row[c])) for c in cols) + " |")
    lines.append("")
    lines.append("- cost in the price units of the endpoint configuration")
    lines.append("- dialogues = distinct (system, case) pairs")
    return "\n".join(lines) + "\n"


def render_usage_csv(summary: pl.DataFrame) -> str:
    summary = summary.drop([c for c in HIDDEN if c in summary.columns])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(summary.columns)
    for row in summary.iter_rows():
        w.writerow(["" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in row])
    return buf.getvalue()
