"""Build the paper's tables from per-dialogue scores (pure functions: frames in, tables out).

* :func:`table2` dataset statistics (paper Table 2) from the train and test cases;
* :func:`table3` main results (paper Table 3), one row per system, rows grouped;
* :func:`paired_table` every system against a reference row, paired bootstrap, Holm-adjusted;
* :func:`shot_table` Tables 6 and 7: zero-shot and few-shot rows of the same expert model and
  their paired difference (FS - ZS), Holm-adjusted over the table;
* :func:`comparison_table` our numbers beside the paper's for systems the paper reports.

Table 3 shows every system except few-shot runs of an expert that also ran zero-shot: those
appear, with their zero-shot partner, in Tables 6 and 7 (as in the paper, whose Table 3 is the
zero-shot table). :func:`write_tables` renders them all to files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from lecode.metrics.registry import scale_note, with_tag
from lecode.records import Case
from lecode.report.model import PAPER, Cell, Row, RowKind, StatsTable, Table
from lecode.report.paper import PaperNumbers, normalise_label, paper_label, paper_setting
from lecode.report.results import (
    adjust_rows,
    paired_cells,
    rank_rows,
    split_scores,
    system_cells,
)
from lecode.report.spec import (
    FEW_SHOT,
    ZERO_SHOT,
    Metric,
    ReportedSystem,
)
from lecode.stats import ResamplePlan

ALPHA = 0.05
#: Columns of Table 3, the paired differences and the comparison with the paper, by tag.
TABLE3_METRICS = with_tag("table3")


def _plan(plan: ResamplePlan | None) -> ResamplePlan:
    return plan if plan is not None else ResamplePlan()


def _interval_note(plan: ResamplePlan) -> str:
    return (
        f"± half-width of the {plan.confidence:.0%} percentile bootstrap interval over cases "
        f"({plan.resamples} resamples, seed {plan.seed})"
    )


def _coverage_note(threshold: float) -> str:
    return (
        f"† coverage n/N below {threshold:.0%} (n/N in Markdown and CSV); 0/N: no case has "
        "the metric (e.g. every dialogue failed); — not applicable (e.g. no judge configured); "
        "no ± with fewer than 2 cases"
    )


def _rank_note(metrics: Sequence[Metric]) -> str:
    lower = [m.header for m in metrics if m.direction == "lower"]
    tail = f" ({', '.join(lower)}: lower is better)" if lower else ""
    return f"per column: best in bold, second in italics (Markdown) or underlined (LaTeX){tail}"


# --------------------------------------------------------------------------- Table 2


def table2(
    train: Sequence[Case], test: Sequence[Case], paper: PaperNumbers | None = None
) -> StatsTable:
    """Dataset statistics; "turns" are the utterances of each recorded dialogue. With
    ``paper``, the paper's Table 2 columns stand beside ours (NaN where it reports none)."""
    splits = (list(train) + list(test), list(train), list(test))

    def stats(cases: list[Case]) -> tuple[float, float, float, float]:
        n = len(cases)
        turns = sum(len(c.dialogue) for c in cases)
        facts = sum(c.n_facts for c in cases)
        return (
            float(n),
            float(turns),
            turns / n if n else float("nan"),
            facts / n if n else float("nan"),
        )

    cols = [stats(s) for s in splits]
    columns = ["LeCoDe", "Train Set", "Test Set"]
    column_keys = ["total", "train", "test"]
    keys = ("dialogues", "turns", "avg_turns", "avg_facts")
    notes = ["turns = utterances of the recorded dialogue (not simulated questions)"]
    if paper is not None:
        published = {normalise_label(k): v for k, v in paper.table2().items()}
        for name, key in zip(
            ("LeCoDe", "Train Set", "Test Set"), ("total", "train", "test"), strict=True
        ):
            vals = published.get(normalise_label(name), {})
            cols.append(tuple(float(vals.get(k, float("nan"))) for k in keys))
            columns.append(f"{name} (paper)")
            column_keys.append(f"{key}_paper")
        notes.append(f"(paper): as published ({paper.source})")
    return StatsTable(
        name="table2",
        title="Statistics over the dataset",
        columns=tuple(columns),
        column_keys=tuple(column_keys),
        rows=(
            "# Dialogue Samples",
            "# Total turns",
            "avg turns per dialogue",
            "avg key facts per dialogue",
        ),
        keys=keys,
        values=tuple(tuple(col[i] for col in cols) for i in range(4)),
        formats=("{:,.0f}", "{:,.0f}", "{:.2f}", "{:.2f}"),
        notes=tuple(notes),
        aggregations=tuple(
            tuple("published" if key.endswith("_paper") else ours for key in column_keys)
            for ours in ("count", "count", "average", "average")
        ),
    )


# --------------------------------------------------------------------------- Table 3


def shot_pairs(
    systems: Sequence[ReportedSystem], *, zero_shot: str = ZERO_SHOT, few_shot: str = FEW_SHOT
) -> list[tuple[ReportedSystem, ReportedSystem]]:
    """(zero-shot, few-shot) systems of the same expert model, in the zero-shot system's order."""
    fs = {s.expert: s for s in systems if s.strategy == few_shot}
    return [(s, fs[s.expert]) for s in systems if s.strategy == zero_shot and s.expert in fs]


def table3_systems(
    systems: Sequence[ReportedSystem], *, zero_shot: str = ZERO_SHOT, few_shot: str = FEW_SHOT
) -> list[ReportedSystem]:
    """Systems shown in Table 3: all but few-shot runs that have a zero-shot partner."""
    paired = {f.key for _, f in shot_pairs(systems, zero_shot=zero_shot, few_shot=few_shot)}
    return [s for s in systems if s.key not in paired]


def system_rows(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    metrics: Sequence[Metric] = TABLE3_METRICS,
    *,
    plan: ResamplePlan | None = None,
) -> list[Row]:
    """One unranked ``system`` row per system, in the given order."""
    plan = _plan(plan)
    frames = split_scores(scores, systems)
    return [
        Row(
            label=s.label,
            group=s.group,
            cells=system_cells(frames[s.key], metrics, plan, n_expected, label=s.label),
            expert=s.expert,
            strategy=s.strategy,
            systems=(s.id,),
        )
        for s in systems
    ]


def table3(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    plan: ResamplePlan | None = None,
    coverage_threshold: float = 0.9,
    metrics: Sequence[Metric] = TABLE3_METRICS,
    zero_shot: str = ZERO_SHOT,
    few_shot: str = FEW_SHOT,
) -> Table:
    """Main results, one ranked row per system (see :func:`table3_systems`)."""
    plan = _plan(plan)
    shown = table3_systems(systems, zero_shot=zero_shot, few_shot=few_shot)
    rows = rank_rows(system_rows(scores, shown, n_expected, metrics, plan=plan), metrics)
    return Table(
        name="table3",
        title="Main results (per-dialogue means over the test cases)",
        metrics=tuple(metrics),
        rows=tuple(rows),
        notes=(
            _interval_note(plan),
            _coverage_note(coverage_threshold),
            _rank_note(metrics),
            scale_note(metrics),
        ),
    )


# --------------------------------------------------------------------------- paired


def _delta_note(alpha: float) -> str:
    return (
        "differences are paired over the cases both systems have; p-values from the paired "
        f"bootstrap, Holm-adjusted over all comparisons of this table; (n.s.) adjusted p >= {alpha}"
    )


def paired_table(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    reference: str | None = None,
    plan: ResamplePlan | None = None,
    metrics: Sequence[Metric] = TABLE3_METRICS,
    alpha: float = ALPHA,
    coverage_threshold: float = 0.9,
) -> Table:
    """Each system minus the reference system (label; default the first), per metric."""
    if not systems:
        raise ValueError("no systems")
    plan = _plan(plan)
    by_label = {s.label: s for s in systems}
    if reference is not None and reference not in by_label:
        raise ValueError(f"reference {reference!r} is not a system label")
    ref = by_label[reference] if reference is not None else systems[0]
    frames = split_scores(scores, systems)
    rows = [
        Row(
            label=f"{s.label} − {ref.label}",
            group=s.group,
            kind="delta",
            cells=paired_cells(frames[s.key], frames[ref.key], metrics, plan, n_expected),
            expert=s.expert,
            strategy=s.strategy,
            systems=(s.id, ref.id),
            delta_of=(s.id, ref.id),
        )
        for s in systems
        if s.key != ref.key
    ]
    return Table(
        name="paired",
        title=f"Paired differences against {ref.label}",
        metrics=tuple(metrics),
        rows=tuple(adjust_rows(rows, alpha=alpha)),
        notes=(
            f"each row: system − {ref.label}, on the display scale",
            _interval_note(plan),
            _delta_note(alpha),
            _coverage_note(coverage_threshold) + " (n = common cases)",
        ),
    )


# --------------------------------------------------------------------------- Tables 6 and 7


def shot_table(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    metrics: Sequence[Metric],
    *,
    name: str,
    title: str,
    plan: ResamplePlan | None = None,
    alpha: float = ALPHA,
    coverage_threshold: float = 0.9,
    zero_shot: str = ZERO_SHOT,
    few_shot: str = FEW_SHOT,
) -> Table:
    """ZS and FS rows per expert model with both, plus a paired ``Δ FS−ZS`` row."""
    plan = _plan(plan)
    pairs = shot_pairs(systems, zero_shot=zero_shot, few_shot=few_shot)
    flat = [s for pair in pairs for s in pair]
    frames = split_scores(scores, flat)
    rows: list[Row] = []
    for zs, fs in pairs:
        for s, setting in ((zs, "ZS"), (fs, "FS")):
            rows.append(
                Row(
                    label=zs.label,
                    group=zs.group,
                    setting=setting,
                    cells=system_cells(frames[s.key], metrics, plan, n_expected, label=s.label),
                    expert=s.expert,
                    strategy=s.strategy,
                    systems=(s.id,),
                )
            )
        rows.append(
            Row(
                label=zs.label,
                group=zs.group,
                setting="Δ FS−ZS",
                kind="delta",
                cells=paired_cells(frames[fs.key], frames[zs.key], metrics, plan, n_expected),
                expert=zs.expert,
                systems=(fs.id, zs.id),
                delta_of=(fs.id, zs.id),
            )
        )
    rows = adjust_rows(rank_rows(rows, metrics), alpha=alpha)
    return Table(
        name=name,
        title=title,
        metrics=tuple(metrics),
        rows=tuple(rows),
        row_header="Models",
        setting_header="",
        notes=(
            "ZS zero-shot, FS few-shot; Δ FS−ZS paired difference",
            _interval_note(plan),
            _coverage_note(coverage_threshold),
            _rank_note(metrics),
            _delta_note(alpha),
            scale_note(metrics),
        ),
    )


#: The zero-shot vs few-shot tables (paper Tables 6 and 7) by name, with their titles; each
#: shows the metrics declared with the tag of its name.
SHOT_TABLES: dict[str, str] = {
    "table6": "Clarification capability, zero-shot (ZS) vs few-shot (FS)",
    "table7": "Advice quality, zero-shot (ZS) vs few-shot (FS)",
}


def shot_table_named(
    name: str,
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    **options: Any,
) -> Table:
    """The ZS vs FS table ``name`` of :data:`SHOT_TABLES` (``options``: those of
    :func:`shot_table`)."""
    return shot_table(
        scores, systems, n_expected, with_tag(name), name=name, title=SHOT_TABLES[name], **options
    )


# --------------------------------------------------------------------------- vs the paper


def _offset_cell(ours: Cell, published: float | None) -> Cell:
    if ours.value is None or published is None:
        return Cell(n=ours.n, N=ours.N, aggregation="offset")
    lo = None if ours.ci_low is None else ours.ci_low - published
    hi = None if ours.ci_high is None else ours.ci_high - published
    # Without an interval (fewer than two cases) nothing can be said about the difference.
    has_interval = lo is not None and hi is not None and (ours.n or 0) >= 2
    inside = has_interval and lo <= 0.0 <= hi  # type: ignore[operator]
    return Cell(
        value=ours.value - published,
        ci_low=lo,
        ci_high=hi,
        n=ours.n,
        N=ours.N,
        distinguishable=(not inside) if has_interval else None,
        aggregation="offset",
    )


def comparison_table(
    rows: Sequence[Row],
    systems: Sequence[ReportedSystem],
    paper: PaperNumbers,
    metrics: Sequence[Metric] = TABLE3_METRICS,
    *,
    few_shot: str = FEW_SHOT,
    coverage_threshold: float = 0.9,
) -> Table:
    """Ours, the paper's and the offset (ours − paper) for systems whose label the paper has.

    ``rows`` are system rows with ``metrics`` columns (e.g. from :func:`system_rows`); a system
    matches by ``paper_label`` or else ``label`` (case-insensitive), ZS or FS by its strategy.
    """
    by_key = {(r.expert, r.strategy): r for r in rows if r.kind == "system"}
    out: list[Row] = []
    for s in systems:
        row = by_key.get(s.key)
        setting = paper_setting(s, few_shot=few_shot)
        published = paper.lookup(paper_label(s), setting)
        if row is None or published is None:
            continue
        pub_cells = tuple(
            Cell(value=published.get(m.key), aggregation="published") for m in metrics
        )
        ours = row.cells
        offsets = tuple(_offset_cell(o, p.value) for o, p in zip(ours, pub_cells, strict=True))
        parts: list[tuple[tuple[Cell, ...], str, RowKind, tuple[str, str] | None]] = [
            (ours, "ours", "system", None),
            (pub_cells, f"paper ({setting})", "paper", None),
            (offsets, "ours − paper", "offset", (s.id, PAPER)),
        ]
        for cells, sub, kind, delta_of in parts:
            out.append(
                Row(
                    label=s.label,
                    cells=cells,
                    group=s.group,
                    kind=kind,
                    setting=sub,
                    expert=s.expert,
                    strategy=s.strategy,
                    systems=(s.id,),
                    delta_of=delta_of,
                )
            )
    return Table(
        name="comparison",
        title="Our numbers beside the paper's",
        metrics=tuple(metrics),
        rows=tuple(out),
        notes=(
            f"paper: {paper.source}",
            "ours ± half-width of our bootstrap interval; ours − paper shifts that interval",
            "(n.s.) the paper's value lies inside our interval",
            _coverage_note(coverage_threshold),
        ),
    )


def low_coverage_cells(table: Table, threshold: float) -> list[tuple[str, str, int, int]]:
    """(row label, metric header, n, N) of every cell whose coverage is below ``threshold``."""
    return [
        (r.label + (f" {r.setting}" if r.setting else ""), m.header, c.n or 0, c.N or 0)
        for r in table.rows
        for m, c in zip(table.metrics, r.cells, strict=True)
        if c.coverage_below(threshold)
    ]
