"""Columns that group the dialogues: one per-dialogue value, averaged within each group.

A grouped table (e.g. recall by number of key facts, 1-3, 4-6, 7+) has one column per
:class:`Group`; each column is a :class:`GroupColumn`, a :class:`~lecode.columns.Metric` whose
cells average its ``source`` metric over the dialogues of the row's system that fall into the
group (aggregation ``group_mean``). A group no dialogue falls into shows ``n = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lecode.columns import Metric


@dataclass(frozen=True)
class Group:
    """Dialogues whose ``by`` column lies in ``[lo, hi]`` (``hi=None``: no upper end), or,
    with ``value``, equals it (a legal domain, a stop reason)."""

    label: str
    lo: int | None = None
    hi: int | None = None
    value: str | None = None

    def __post_init__(self) -> None:
        if (self.value is None) == (self.lo is None):
            raise ValueError(f"group {self.label!r}: give exactly one of lo (and hi) and value")
        if self.lo is not None and self.hi is not None and self.hi < self.lo:
            raise ValueError(f"group {self.label!r}: hi {self.hi} is below lo {self.lo}")

    def condition(self, by: str) -> pl.Expr:
        if self.value is not None:
            return pl.col(by).cast(pl.Utf8) == self.value
        cond = pl.col(by) >= self.lo
        return cond if self.hi is None else cond & (pl.col(by) <= self.hi)

    def words(self, by: str) -> str:
        """The group as a phrase, e.g. ``n_facts in 4-6`` or ``n_facts >= 7``."""
        if self.value is not None:
            return f"{by} = {self.value}"
        if self.hi is None:
            return f"{by} >= {self.lo}"
        return f"{by} = {self.lo}" if self.hi == self.lo else f"{by} in {self.lo}-{self.hi}"


def buckets(*edges: int) -> tuple[Group, ...]:
    """Groups ``[e0, e1-1], [e1, e2-1], ..., [en, ∞)`` labelled ``1–3``, ``4–6``, ``7+``."""
    if not edges or list(edges) != sorted(set(edges)):
        raise ValueError("bucket edges must be strictly increasing")
    out = []
    for lo, nxt in zip(edges, (*edges[1:], None), strict=True):
        hi = None if nxt is None else nxt - 1
        label = f"{lo}+" if hi is None else str(lo) if hi == lo else f"{lo}–{hi}"
        out.append(Group(label=label, lo=lo, hi=hi))
    return tuple(out)


@dataclass(frozen=True)
class GroupColumn(Metric):
    """One group's column: ``source`` averaged over the dialogues in ``group`` of ``by``."""

    source: Metric | None = None
    by: str = ""
    group: Group | None = None

    def rows_of(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The rows of ``frame`` in this column's group."""
        assert self.group is not None
        if self.by not in frame.columns:
            raise ValueError(f"column {self.key!r}: the scores have no column {self.by!r}")
        return frame.filter(self.group.condition(self.by))


def group_columns(source: Metric, by: str, groups: tuple[Group, ...]) -> tuple[GroupColumn, ...]:
    """The columns of ``source`` grouped by ``by``: key ``<source>@<by>=<label>``, header the
    group's label, scale, direction and section those of ``source``."""
    return tuple(
        GroupColumn(
            key=f"{source.key}@{by}={g.label}",
            header=g.label,
            scale=source.scale,
            direction=source.direction,
            section=source.section,
            source=source,
            by=by,
            group=g,
        )
        for g in groups
    )
