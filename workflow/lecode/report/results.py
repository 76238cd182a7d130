"""From per-dialogue scores to per-system cells: means, bootstrap intervals, coverage, ranks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from lecode.report.grouping import GroupColumn
from lecode.report.model import Aggregation, Cell, Row
from lecode.report.spec import Metric, ReportedSystem
from lecode.stats import Estimate, PairedResult, ResamplePlan, holm

KEY_COLUMNS = ("case_id", "expert", "strategy")


def split_scores(
    scores: pl.DataFrame, systems: Sequence[ReportedSystem]
) -> dict[tuple[str, str], pl.DataFrame]:
    """Each system's rows of ``scores``, sorted by case id; an absent system gets no rows.

    Raises ``ValueError`` when a system has two rows for one case.
    """
    missing = [c for c in KEY_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks columns {missing}")
    out: dict[tuple[str, str], pl.DataFrame] = {}
    for s in systems:
        part = scores.filter(
            (pl.col("expert") == s.expert) & (pl.col("strategy") == s.strategy)
        ).sort("case_id")
        dup = part.filter(pl.col("case_id").is_duplicated())
        if dup.height:
            first = dup["case_id"][0]
            raise ValueError(f"{s.label}: case {first!r} scored more than once")
        out[s.key] = part
    return out


def metric_values(frame: pl.DataFrame, key: str) -> np.ndarray:
    """A metric column as float64 with NaN for missing (null or NaN); all-NaN if absent."""
    if key not in frame.columns:
        return np.full(frame.height, np.nan)
    col = frame[key].cast(pl.Float64)
    arr: np.ndarray = col.fill_null(float("nan")).to_numpy().astype(np.float64, copy=True)
    return arr


def cell_from_estimate(
    est: Estimate, metric: Metric, n_expected: int, aggregation: Aggregation = "mean"
) -> Cell:
    s = est.scaled(metric.scale)
    return Cell(
        value=s.mean,
        ci_low=s.ci_low,
        ci_high=s.ci_high,
        n=est.n,
        N=n_expected,
        aggregation=aggregation,
    )


def need_met(frame: pl.DataFrame, metric: Metric) -> np.ndarray:
    """Per row of ``frame``: whether the dialogue meets ``metric``'s need, as far as the
    scores show it (not failed; with advice where the need asks for it; the need's witness
    metric present, :func:`lecode.metrics.registry.need_witness`). A dialogue not known to
    meet the need counts as a failure."""
    from lecode.metrics.registry import need_witness

    need = getattr(metric, "need", "dialogue")
    ok = (frame["stop_reason"] != "error").to_numpy() if frame.height else np.zeros(0, bool)
    if need in ("advice", "judgement"):
        ok = ok & (frame["stop_reason"] == "advice").to_numpy()
    if need != "dialogue":
        witness = need_witness(need)
        if witness is None or witness not in frame.columns:
            return np.zeros(frame.height, dtype=bool)
        ok = ok & ~np.isnan(metric_values(frame, witness))
    return np.asarray(ok, dtype=bool)


def not_applicable_count(frame: pl.DataFrame, metric: Metric) -> int | None:
    """Dialogues of ``frame`` where ``metric`` does not apply (missing although the dialogue
    meets its need); None for a metric whose missing value is always a failure."""
    if not getattr(metric, "not_applicable", False):
        return None
    values = metric_values(frame, metric.key)
    return int(np.sum(np.isnan(values) & need_met(frame, metric)))


def metric_cell(
    frame: pl.DataFrame,
    metric: Metric,
    plan: ResamplePlan,
    n_expected: int,
    aggregation: Aggregation = "mean",
) -> Cell:
    """The cell of one metric over one system's rows; a grouped column
    (:class:`~lecode.report.grouping.GroupColumn`) over the rows of its group, ``N`` their
    number (``n = 0`` of 0 for an empty group)."""
    if isinstance(metric, GroupColumn):
        assert metric.source is not None
        rows = metric.rows_of(frame)
        if metric.source.key not in frame.columns:
            return Cell(aggregation="group_mean")
        if rows.height == 0:
            return Cell(n=0, N=0, aggregation="group_mean")
        cell = metric_cell(rows, metric.source, plan, rows.height, "group_mean")
        return replace(cell, n_na=not_applicable_count(rows, metric.source))
    if metric.key not in frame.columns:
        # a metric this run does not compute (no judge, BERTScore off): "—"
        return Cell(aggregation=aggregation)
    est = plan.mean(metric_values(frame, metric.key))
    cell = cell_from_estimate(est, metric, n_expected, aggregation)
    return replace(cell, n_na=not_applicable_count(frame, metric))


def system_cells(
    frame: pl.DataFrame,
    metrics: Sequence[Metric],
    plan: ResamplePlan,
    n_expected: int,
    *,
    label: str = "",
    aggregation: Aggregation = "mean",
) -> tuple[Cell, ...]:
    """One cell per metric for one system's rows (see :func:`split_scores`): the mean over
    them, or what ``aggregation`` says the per-dialogue values are averaged as."""
    if n_expected < 0:
        raise ValueError("the number of expected cases must not be negative")
    if frame.height > n_expected:
        raise ValueError(
            f"{label or 'system'}: {frame.height} scored dialogues but only {n_expected} expected"
        )
    return tuple(metric_cell(frame, m, plan, n_expected, aggregation) for m in metrics)


def aligned_pair(a: pl.DataFrame, b: pl.DataFrame, key: str) -> tuple[np.ndarray, np.ndarray]:
    """The two systems' values of ``key`` on their common cases, aligned by case id."""
    left = (
        a.select("case_id", pl.col(key).cast(pl.Float64).alias("a")) if key in a.columns else None
    )
    right = (
        b.select("case_id", pl.col(key).cast(pl.Float64).alias("b")) if key in b.columns else None
    )
    if left is None or right is None:
        return np.empty(0), np.empty(0)
    joined = left.join(right, on="case_id", how="inner").sort("case_id")
    return (
        joined["a"].fill_null(float("nan")).to_numpy().astype(np.float64, copy=True),
        joined["b"].fill_null(float("nan")).to_numpy().astype(np.float64, copy=True),
    )


def paired_cell(result: PairedResult, metric: Metric, n_expected: int) -> Cell:
    cell = cell_from_estimate(result.diff, metric, n_expected, "paired_difference")
    return replace(cell, n=result.n, p_value=result.p_value)


def paired_cells(
    a: pl.DataFrame,
    b: pl.DataFrame,
    metrics: Sequence[Metric],
    plan: ResamplePlan,
    n_expected: int,
) -> tuple[Cell, ...]:
    """Cells of ``a - b`` per metric (paired over common cases), unadjusted p-values."""
    cells = []
    for m in metrics:
        if m.key not in a.columns or m.key not in b.columns:
            cells.append(Cell(aggregation="paired_difference"))  # not computed in this run
            continue
        av, bv = aligned_pair(a, b, m.key)
        cells.append(paired_cell(plan.paired(av, bv), m, n_expected))
    return tuple(cells)


def adjust_rows(rows: Sequence[Row], *, alpha: float) -> list[Row]:
    """Holm-adjust the p-values of all ``delta`` cells of ``rows`` as one family."""
    positions = [
        (i, j) for i, r in enumerate(rows) if r.kind == "delta" for j in range(len(r.cells))
    ]
    adjusted = holm([rows[i].cells[j].p_value for i, j in positions])
    new = [list(r.cells) for r in rows]
    for (i, j), p_adj in zip(positions, adjusted, strict=True):
        cell = new[i][j]
        new[i][j] = replace(
            cell, p_adjusted=p_adj, distinguishable=None if p_adj is None else p_adj < alpha
        )
    return [r.with_cells(tuple(c)) for r, c in zip(rows, new, strict=True)]


def display_value(value: float) -> float:
    """The value as printed with one decimal (ranks compare printed values, so ties tie)."""
    return float(f"{value:.1f}") + 0.0


def rank_rows(rows: Sequence[Row], metrics: Sequence[Metric]) -> list[Row]:
    """Rank each column's ``system`` rows, direction-aware: 1 best, 2 second, ... (bold and
    underlined are 1 and 2; ``report.top_marked`` colours the top k).

    Ranks compare the printed (one-decimal) values: equal printed values share a rank.
    """
    new = [list(r.cells) for r in rows]
    for j, m in enumerate(metrics):
        if m.direction is None:
            continue
        values = sorted(
            {
                display_value(c.value)
                for r in rows
                if r.kind == "system"
                for c in [r.cells[j]]
                if c.value is not None
            },
            reverse=m.direction == "higher",
        )
        places = {v: k + 1 for k, v in enumerate(values)}
        for i, r in enumerate(rows):
            c = r.cells[j]
            if r.kind == "system" and c.value is not None:
                new[i][j] = replace(c, rank=places.get(display_value(c.value)))
    return [r.with_cells(tuple(c)) for r, c in zip(rows, new, strict=True)]
