"""The in-memory shape of a results table, independent of its output format."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from lecode.report.spec import Metric

RowKind = Literal["system", "paper", "delta", "offset"]


@dataclass(frozen=True)
class Cell:
    """One table cell, already on the display scale (x100, x10 or raw).

    ``n``/``N``: cases with the metric present / cases expected (``None`` for paper numbers).
    ``rank``: 1 for the best and 2 for the second best of a column (system rows only).
    ``distinguishable``: for differences, whether they differ from zero (Holm-adjusted paired
    test for ``delta`` rows; paper value outside our interval for ``offset`` rows).
    """

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    N: int | None = None
    rank: int | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    distinguishable: bool | None = None

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def half_width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2.0

    def coverage_below(self, threshold: float) -> bool:
        """True when fewer cases than ``threshold`` of those expected have the metric (0/N
        included); False for cells without an expected count (not applicable, paper)."""
        if self.n is None or not self.N:
            return False
        return self.n / self.N < threshold


#: ``delta_of`` partner of an ``offset`` row: the published number (``run.paper``).
PAPER = "paper"


@dataclass(frozen=True)
class Row:
    """One table row. ``setting`` is the second column of Tables 6/7 and the comparison table.

    ``systems``: keys (:func:`lecode.report.spec.system_key`) of the systems the row's numbers
    are computed from; ``delta_of``: for a difference row, ``(a, b)`` of ``a − b``, set by the
    code that computes the difference (an ``offset`` row's ``b`` is :data:`PAPER`).
    """

    label: str
    cells: tuple[Cell, ...]
    group: str = ""
    kind: RowKind = "system"
    setting: str = ""
    expert: str = ""
    strategy: str = ""
    systems: tuple[str, ...] = ()
    delta_of: tuple[str, str] | None = None

    def with_cells(self, cells: tuple[Cell, ...]) -> Row:
        return replace(self, cells=cells)


@dataclass(frozen=True)
class Table:
    """A metrics table: rows x ``metrics`` columns, plus notes printed under it."""

    name: str
    title: str
    metrics: tuple[Metric, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    row_header: str = "Models"
    setting_header: str = ""

    @property
    def has_setting(self) -> bool:
        return any(r.setting for r in self.rows)

    @property
    def has_groups(self) -> bool:
        return any(r.group for r in self.rows)


@dataclass(frozen=True)
class StatsTable:
    """A small table of named statistics by column (Table 2): ``values[row][col]``."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    formats: tuple[str, ...]
    keys: tuple[str, ...] = ()
    column_keys: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    row_header: str = "Dataset"
