"""The noise report (variance components and minimum detectable differences per Table 3
column, from :mod:`lecode.noise`) and the adjacent-rows table: for each pair of neighbouring
Table 3 rows, their difference and whether it exceeds the minimum detectable difference."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lecode.metrics.registry import get
from lecode.report.document import (
    Column,
    Provenance,
    TableDocument,
    metrics_document,
    stats_document,
)
from lecode.report.model import Cell, Row, StatsTable, Table
from lecode.report.spec import Metric

NOISE_JSON = "noise.json"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("cases", "SD cases"),
    ("expert", "SD expert seeds"),
    ("client", "SD client seeds"),
    ("judge", "SD judge runs"),
    ("total", "SD total"),
    ("mdd", "MDD"),
)


def _sd(var: float | None, scale: float) -> float:
    return float("nan") if var is None else (max(var, 0.0) ** 0.5) * scale


def noise_table(noise: Mapping[str, Any]) -> StatsTable:
    """Rows: the Table 3 columns measured; columns: the standard deviation of each variance
    component and of their sum (display scale), and the MDD."""
    keys, names, values = [], [], []
    for key, m in noise["metrics"].items():
        metric = get(key)
        scale = metric.scale
        keys.append(key)
        names.append(metric.display_header)
        row = [_sd(m[c], scale) for c, _ in COLUMNS[:5]]
        row.append(float("nan") if m.get("mdd") is None else float(m["mdd"]))
        values.append(tuple(row))
    vary = ", ".join(noise["vary"])
    return StatsTable(
        name="noise",
        title="Measured noise: variance components and minimum detectable differences",
        columns=tuple(h for _, h in COLUMNS),
        column_keys=tuple(k for k, _ in COLUMNS),
        rows=tuple(names),
        keys=tuple(keys),
        values=tuple(values),
        formats=tuple("{:.2f}" for _ in keys),
        row_header="Metric",
        notes=(
            f"{noise['subset']} test cases, {noise['n']} runs per varied factor ({vary}), "
            f"{noise['n_systems']} system(s) pooled; standard deviations on the table's scale "
            "(x100 or x10), per dialogue",
            f"MDD: the smallest difference of two systems' means over the configured test set "
            f"(N = {noise['n_test']}) that a two-sided test at alpha = {noise['alpha']} detects "
            f"with power {noise['power']}: (z(1-alpha/2) + z(power)) * sqrt(2 * total / N)",
            "— not measured (factor not varied, or no judge); SD judge is 0 for metrics the "
            "judge does not score",
        ),
    )


def noise_document(noise: Mapping[str, Any], spec_digest: str) -> TableDocument:
    doc = stats_document(noise_table(noise), Provenance(spec_digest=spec_digest))
    rows = []
    for r in doc.rows:
        cells = []
        for c in r.cells:
            text = (
                "minimum detectable difference (display scale) from the pooled total variance "
                "and the configured test set size (noise.json)"
                if c.column == "mdd"
                else f"square root of the pooled {c.column} variance component of {r.key} "
                "(lecode.noise), on the display scale"
            )
            cells.append(replace(c, description=text))
        rows.append(r.with_cells(tuple(cells)))
    return doc.model_copy(update={"rows": tuple(rows)})


def _metric(column: Column) -> Metric:
    """The Table 3 column as the metric it was built from (its key, scale and direction)."""
    return Metric(column.key, column.name, column.scale or 1.0, column.direction, column.section)  # type: ignore[arg-type]


def adjacent_table(table3: Table | TableDocument, noise: Mapping[str, Any]) -> Table:
    """For each pair of neighbouring system rows of Table 3 (as printed), the difference
    lower row − upper row per column, marked (n.s.) when it does not exceed that column's MDD."""
    mdd = {k: v.get("mdd") for k, v in noise["metrics"].items()}
    systems = [r for r in table3.rows if r.kind == "system"]
    metrics = (
        table3.metrics if isinstance(table3, Table) else tuple(_metric(c) for c in table3.columns)
    )
    rows = []
    for a, b in zip(systems, systems[1:], strict=False):
        cells = []
        for m, ca, cb in zip(metrics, a.cells, b.cells, strict=True):
            if ca.value is None or cb.value is None:
                cells.append(Cell(n=0 if ca.N else None, N=ca.N, aggregation="cell_difference"))
                continue
            diff = cb.value - ca.value
            limit = mdd.get(m.key)
            cells.append(
                Cell(
                    value=diff,
                    n=min(ca.n or 0, cb.n or 0),
                    N=ca.N,
                    distinguishable=None if limit is None else abs(diff) > limit,
                    aggregation="cell_difference",
                )
            )
        rows.append(
            Row(
                label=f"{b.label} − {a.label}",
                cells=tuple(cells),
                group=b.group,
                kind="delta",
                expert=b.expert,
                strategy=b.strategy,
                systems=(*b.systems, *a.systems),
                delta_of=(b.systems[0], a.systems[0]) if a.systems and b.systems else None,
            )
        )
    return Table(
        name="adjacent",
        title="Neighbouring rows of Table 3: difference against the minimum detectable difference",
        metrics=metrics,
        rows=tuple(rows),
        notes=(
            "each row: lower row − upper row of Table 3, as printed (display scale)",
            "(n.s.): the difference does not exceed the column's minimum detectable difference "
            "(80% power by default) of the noise report; no mark: it does; — where the noise "
            "report has no MDD for the column",
        ),
    )


def adjacent_document(
    table3_doc: TableDocument, noise: Mapping[str, Any], *, threshold: float
) -> TableDocument:
    table = adjacent_table(table3_doc, noise)
    prov = Provenance(
        spec_digest=table3_doc.spec_digest, run=table3_doc.run, systems=table3_doc.systems
    )
    doc = metrics_document(
        table, prov, threshold=threshold, bootstrap={"resamples": 0, "seed": 0, "confidence": 0}
    )
    rows = []
    for r in doc.rows:
        cells = tuple(
            replace(
                c,
                description=f"difference of the two Table 3 cells {r.label} of {c.column} "
                "(display scale); distinguishable = |difference| > the noise report's MDD",
            )
            for c in r.cells
        )
        rows.append(r.with_cells(cells))
    return doc.model_copy(update={"rows": tuple(rows)})
