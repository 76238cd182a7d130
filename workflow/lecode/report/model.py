"""The report's tables in memory and in their documents: one :class:`Cell` and one :class:`Row`.

The table builders (:mod:`lecode.report.tables` and its siblings) make cells with their numbers
and how they were aggregated; :func:`lecode.report.document.metrics_document` gives each cell
its id, printed text and description, and the document (with these same cells) is what the
Markdown, CSV, LaTeX and HTML are rendered from and what ``lecode explain`` reads back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass as checked_dataclass

from lecode.report.spec import Metric

RowKind = Literal["system", "paper", "delta", "offset", "dataset", "usage"]
CellStatus = Literal["value", "no_data", "not_applicable", "empty"]

#: How a cell's number was computed from its inputs (``lecode explain`` dispatches on it):
#:
#: * ``mean``: mean over the test dialogues where a per-dialogue score is present;
#: * ``group_mean``: mean over the test dialogues of one group (a column of a grouped table,
#:   e.g. dialogues with 4-6 key facts) where a per-dialogue score is present;
#: * ``paired_difference``: mean over the dialogues both systems have of the paired difference
#:   ``a − b`` of a per-dialogue score (the row's ``delta_of``);
#: * ``subset_mean``: mean of a per-dialogue score over a subset of the dialogues (those whose
#:   client behaved, :mod:`lecode.report.audit`);
#: * ``share``: mean over dialogues (or consultations) of the share of their client answers with
#:   a property (the client audit, Table 4);
#: * ``published``: a number as the paper publishes it (``run.paper``), not computed here;
#: * ``offset``: our mean minus the published number;
#: * ``cell_difference``: the difference of two cells of another table (``delta_of``);
#: * ``count``: a count or sum (dataset sizes, usage);
#: * ``average``: a per-dialogue average over the dataset files (Table 2);
#: * ``statistic``: another statistic, named by the cell's description (noise, sentinel).
Aggregation = Literal[
    "mean",
    "group_mean",
    "paired_difference",
    "subset_mean",
    "share",
    "published",
    "offset",
    "cell_difference",
    "count",
    "average",
    "statistic",
]
#: Aggregations ``lecode explain`` recomputes from the per-dialogue scores.
FROM_SCORES: frozenset[str] = frozenset(
    {"mean", "group_mean", "paired_difference", "cell_difference"}
)
#: Aggregations that involve the published numbers.
FROM_PAPER: frozenset[str] = frozenset({"published", "offset"})

_STRICT = ConfigDict(extra="forbid")


@checked_dataclass(frozen=True, config=_STRICT)
class Cell:
    """One table cell, on the display scale (x100, x10 or raw).

    ``n``/``N``: cases with the metric present / cases expected (``None`` for paper numbers).
    ``n_na``: of the ``N``, the cases where the metric does not apply (a metric whose missing
    value means "not applicable"); they are not counted against coverage. ``None``: no such
    count (a metric whose missing value is always a failure).
    ``rank``: 1 for the best and 2 for the second best of a column (system rows only).
    ``distinguishable``: for differences, whether they differ from zero (Holm-adjusted paired
    test for ``delta`` rows; paper value outside our interval for ``offset`` rows).

    ``column``, ``id``, ``display``, ``status`` and ``description`` are given when the cell
    enters its table's document (:func:`lecode.report.document.metrics_document`); there the
    interval is the one printed (none from fewer than two cases).
    """

    value: int | float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    N: int | None = None
    n_na: int | None = None
    rank: int | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    distinguishable: bool | None = None
    aggregation: Aggregation = "mean"
    column: str = ""
    id: str = ""
    display: str = ""
    status: CellStatus = "value"
    description: str = ""

    @property
    def applicable(self) -> bool:
        return self.status != "not_applicable"

    @property
    def applicable_n(self) -> int | None:
        """Cases expected to have the metric: ``N`` less those where it does not apply."""
        return None if self.N is None else self.N - (self.n_na or 0)

    def coverage_below(self, threshold: float) -> bool:
        """True when fewer cases than ``threshold`` of those where the metric applies have it
        (0/N included); False for cells without an expected count (not applicable, paper,
        an empty group) or where it applies to no case."""
        expected = self.applicable_n
        if self.n is None or not expected:
            return False
        return self.n / expected < threshold


#: ``delta_of`` partner of an ``offset`` row: the published number (``run.paper``).
PAPER = "paper"


@checked_dataclass(frozen=True, config=_STRICT)
class Row:
    """One table row. ``setting`` is the second column of Tables 6/7 and the comparison table.

    ``systems``: keys (:func:`lecode.report.spec.system_key`) of the systems the row's numbers
    are computed from; ``delta_of``: for a difference row, ``(a, b)`` of ``a − b``, set by the
    code that computes the difference (an ``offset`` row's ``b`` is :data:`PAPER`). ``key`` and
    ``format``: a statistic's key and format (Table 2).
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
    key: str = ""
    format: str | None = None

    def with_cells(self, cells: tuple[Cell, ...]) -> Row:
        return replace(self, cells=cells)


class RowFlags:
    """What the renderers ask of a table's rows: a base of the built table and its document."""

    if TYPE_CHECKING:
        rows: Sequence[Row]

    @property
    def has_setting(self) -> bool:
        return any(r.setting for r in self.rows)

    @property
    def has_groups(self) -> bool:
        return any(r.group for r in self.rows)


@dataclass(frozen=True)
class Table(RowFlags):
    """A metrics table as built: rows x ``metrics`` columns, plus notes printed under it."""

    name: str
    title: str
    metrics: tuple[Metric, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    row_header: str = "Models"
    setting_header: str = ""

    @property
    def columns(self) -> tuple[Metric, ...]:
        return self.metrics


@dataclass(frozen=True)
class StatsTable:
    """A small table of named statistics by column (Table 2): ``values[row][col]``;
    ``aggregations[row][col]`` says how each was computed (default ``statistic``)."""

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
    aggregations: tuple[tuple[Aggregation, ...], ...] = ()

    def aggregation(self, row: int, col: int) -> Aggregation:
        return self.aggregations[row][col] if self.aggregations else "statistic"
