"""Build the metrics tables from per-dialogue scores (pure functions: frames in, tables out).

Every metrics table is declared (:mod:`lecode.report.declared`, see
:mod:`lecode.report.tabledecl`) and built by :func:`build_declared`, which makes the rows its
declaration names:

* ``systems``: one row per system (:func:`system_rows`), ranked per column;
* ``paired``: every system against a reference row, paired bootstrap, Holm-adjusted;
* ``shot_pairs``: zero-shot and few-shot rows of the same expert model and their paired
  difference (FS - ZS), Holm-adjusted over the table (Tables 6 and 7);
* ``paper``: our numbers beside the paper's for systems the paper reports.

:func:`table3`, :func:`paired_table` and :func:`shot_table_named` build the declared tables
of those names; :func:`table2` is the dataset statistics (paper
Table 2). Table 3 shows every system except few-shot runs of an expert that also ran zero-shot:
those appear, with their zero-shot partner, in Tables 6 and 7.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from lecode.records import Case
from lecode.report import table_registry
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
from lecode.report.tabledecl import NoteContext, TableDeclaration, not_applicable_note
from lecode.stats import ResamplePlan

ALPHA = 0.05


@dataclass(frozen=True)
class BuildContext:
    """What every declared table is built from: the per-dialogue scores, the systems, the
    number of test cases, and the ``report:`` settings the tables read."""

    scores: pl.DataFrame
    systems: Sequence[ReportedSystem]
    n_expected: int
    plan: ResamplePlan = ResamplePlan()
    coverage_threshold: float = 0.9
    alpha: float = ALPHA
    reference: str | None = None
    zero_shot: str = ZERO_SHOT
    few_shot: str = FEW_SHOT
    paper: PaperNumbers | None = None


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

    cols: list[tuple[float, ...]] = [stats(s) for s in splits]
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


# --------------------------------------------------------------------------- rows


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
    metrics: Sequence[Metric],
    *,
    plan: ResamplePlan | None = None,
) -> list[Row]:
    """One unranked ``system`` row per system, in the given order."""
    plan = plan if plan is not None else ResamplePlan()
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


def _reference(ctx: BuildContext, systems: Sequence[ReportedSystem]) -> ReportedSystem:
    if not systems:
        raise ValueError("no systems")
    by_label = {s.label: s for s in systems}
    if ctx.reference is not None and ctx.reference not in by_label:
        raise ValueError(f"reference {ctx.reference!r} is not a system label")
    return by_label[ctx.reference] if ctx.reference is not None else systems[0]


def paired_rows(
    ctx: BuildContext, systems: Sequence[ReportedSystem], metrics: Sequence[Metric]
) -> list[Row]:
    """Each system minus the reference system, per metric, Holm-adjusted over the rows."""
    ref = _reference(ctx, systems)
    frames = split_scores(ctx.scores, systems)
    rows = [
        Row(
            label=f"{s.label} − {ref.label}",
            group=s.group,
            kind="delta",
            cells=paired_cells(frames[s.key], frames[ref.key], metrics, ctx.plan, ctx.n_expected),
            expert=s.expert,
            strategy=s.strategy,
            systems=(s.id, ref.id),
            delta_of=(s.id, ref.id),
        )
        for s in systems
        if s.key != ref.key
    ]
    return adjust_rows(rows, alpha=ctx.alpha)


def shot_rows(ctx: BuildContext, metrics: Sequence[Metric], *, rank: bool = True) -> list[Row]:
    """ZS and FS rows per expert model with both, plus a paired ``Δ FS−ZS`` row."""
    pairs = shot_pairs(ctx.systems, zero_shot=ctx.zero_shot, few_shot=ctx.few_shot)
    flat = [s for pair in pairs for s in pair]
    frames = split_scores(ctx.scores, flat)
    n, plan = ctx.n_expected, ctx.plan
    rows: list[Row] = []
    for zs, fs in pairs:
        for s, setting in ((zs, "ZS"), (fs, "FS")):
            rows.append(
                Row(
                    label=zs.label,
                    group=zs.group,
                    setting=setting,
                    cells=system_cells(frames[s.key], metrics, plan, n, label=s.label),
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
                cells=paired_cells(frames[fs.key], frames[zs.key], metrics, plan, n),
                expert=zs.expert,
                systems=(fs.id, zs.id),
                delta_of=(fs.id, zs.id),
            )
        )
    return adjust_rows(rank_rows(rows, metrics) if rank else rows, alpha=ctx.alpha)


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


def comparison_rows(
    rows: Sequence[Row],
    systems: Sequence[ReportedSystem],
    paper: PaperNumbers,
    metrics: Sequence[Metric],
    *,
    few_shot: str = FEW_SHOT,
) -> list[Row]:
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
    return out


# --------------------------------------------------------------------------- declared tables


def build_declared(
    decl: TableDeclaration, ctx: BuildContext, metrics: Sequence[Metric] | None = None
) -> Table | None:
    """The table ``decl`` declares (``metrics``: other columns than its own, for tests and
    library use); None when it has no rows to show (a ``paired`` table with one system, no
    ZS/FS pair, no paper numbers)."""
    cols = tuple(metrics) if metrics is not None else decl.columns.metrics()
    reference = ""
    paper_source = ""
    if decl.rows == "systems":
        shown = table3_systems(ctx.systems, zero_shot=ctx.zero_shot, few_shot=ctx.few_shot)
        rows = system_rows(ctx.scores, shown, ctx.n_expected, cols, plan=ctx.plan)
        rows = rank_rows(rows, cols) if decl.rank else rows
    elif decl.rows == "paired":
        shown = table3_systems(ctx.systems, zero_shot=ctx.zero_shot, few_shot=ctx.few_shot)
        reference = _reference(ctx, shown).label
        rows = paired_rows(ctx, shown, cols) if len(shown) > 1 else []
    elif decl.rows == "shot_pairs":
        rows = shot_rows(ctx, cols, rank=decl.rank)
    else:
        if ctx.paper is None:
            return None
        paper_source = ctx.paper.source
        ours = system_rows(ctx.scores, ctx.systems, ctx.n_expected, cols, plan=ctx.plan)
        rows = comparison_rows(ours, ctx.systems, ctx.paper, cols, few_shot=ctx.few_shot)
    if not rows:
        return None
    note_ctx = NoteContext(
        plan=ctx.plan,
        threshold=ctx.coverage_threshold,
        alpha=ctx.alpha,
        metrics=cols,
        rows=tuple(rows),
        reference=reference,
        paper_source=paper_source,
    )
    notes = tuple(n for n in decl.note_texts(note_ctx) if n)
    if any(c.n_na for r in rows for c in r.cells):
        notes = (*notes, not_applicable_note(cols))
    return Table(
        name=decl.name,
        title=decl.title.format(reference=reference),
        metrics=cols,
        rows=tuple(rows),
        notes=notes,
        row_header=decl.row_header,
        setting_header=decl.setting_header,
    )


def _built(name: str, ctx: BuildContext, metrics: Sequence[Metric] | None) -> Table:
    decl = table_registry.get(name)
    table = build_declared(decl, ctx, metrics)
    if table is None:  # nothing to show: the columns without rows
        cols = tuple(metrics) if metrics is not None else decl.columns.metrics()
        return Table(name=name, title=decl.title, metrics=cols, rows=())
    return table


def table3(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    plan: ResamplePlan | None = None,
    coverage_threshold: float = 0.9,
    metrics: Sequence[Metric] | None = None,
    zero_shot: str = ZERO_SHOT,
    few_shot: str = FEW_SHOT,
) -> Table:
    """Main results, one ranked row per system (see :func:`table3_systems`)."""
    ctx = BuildContext(
        scores,
        systems,
        n_expected,
        plan=plan or ResamplePlan(),
        coverage_threshold=coverage_threshold,
        zero_shot=zero_shot,
        few_shot=few_shot,
    )
    return _built("table3", ctx, metrics)


def paired_table(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    reference: str | None = None,
    plan: ResamplePlan | None = None,
    metrics: Sequence[Metric] | None = None,
    alpha: float = ALPHA,
    coverage_threshold: float = 0.9,
) -> Table:
    """Each system minus the reference system (label; default the first), per metric."""
    ctx = BuildContext(
        scores,
        systems,
        n_expected,
        plan=plan or ResamplePlan(),
        coverage_threshold=coverage_threshold,
        alpha=alpha,
        reference=reference,
    )
    _reference(ctx, systems)  # no systems, or an unknown reference: refused
    return _built("paired", ctx, metrics)


def shot_table_named(
    name: str,
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    plan: ResamplePlan | None = None,
    **options: Any,
) -> Table:
    """The declared zero-shot vs few-shot table ``name`` (``options``: the fields of
    :class:`BuildContext`, and ``metrics``)."""
    metrics = options.pop("metrics", None)
    ctx = BuildContext(scores, systems, n_expected, plan=plan or ResamplePlan(), **options)
    return _built(name, ctx, metrics)
