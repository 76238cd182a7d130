"""How a metrics table is declared: its rows, its columns, its notes.

A declaration (:class:`TableDeclaration`) says which rows a table has (:data:`ROW_KINDS`: the
systems of Table 3, each system against a reference, zero-shot vs few-shot pairs, ours beside
the paper's), which columns (:class:`MetricColumns`: declared metrics by tag or key;
:class:`GroupedColumns`: one metric averaged per group of dialogues, e.g. by number of key
facts) and which notes are printed under it (text, or a function of :class:`NoteContext`).
Declarations live in the modules of :mod:`lecode.report.declared`;
:mod:`lecode.report.table_registry` collects them, :func:`lecode.report.tables.build_declared`
builds one, and the tables step, the HTML report and ``lecode explain`` show every table the
registry has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from lecode.columns import Metric
from lecode.report.grouping import Group, group_columns
from lecode.report.model import Row
from lecode.stats import ResamplePlan

RowKind = Literal["systems", "paired", "shot_pairs", "paper"]

#: The rows a table can have, and what each one is.
ROW_KINDS: dict[str, str] = {
    "systems": "one row per system Table 3 shows (few-shot runs with a zero-shot partner go to "
    "the zero-shot vs few-shot tables), grouped as configured",
    "paired": "each system Table 3 shows minus the reference system (report.reference, "
    "default the first), paired over the cases both have, Holm-adjusted over the table",
    "shot_pairs": "per expert model run both zero-shot and few-shot: the ZS row, the FS row and "
    "their paired difference FS − ZS, Holm-adjusted over the table",
    "paper": "per system the paper reports: ours, the paper's number and ours − paper "
    "(only with the paper's numbers)",
}


@dataclass(frozen=True)
class NoteContext:
    """What a note function is given: the settings the table was built with, its columns and
    rows, and the reference row's label (paired tables) or the paper's source."""

    plan: ResamplePlan
    threshold: float
    alpha: float
    metrics: tuple[Metric, ...]
    rows: tuple[Row, ...] = ()
    reference: str = ""
    paper_source: str = ""


Note = str | Callable[[NoteContext], str]


@dataclass(frozen=True)
class MetricColumns:
    """Declared metrics as columns: those carrying ``tag`` (registry order), or ``keys`` in
    the order given."""

    tag: str | None = None
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.tag is None) == (not self.keys):
            raise ValueError("MetricColumns: give exactly one of tag and keys")

    def metrics(self) -> tuple[Metric, ...]:
        from lecode.metrics import registry

        if self.tag is not None:
            return registry.with_tag(self.tag)
        return tuple(registry.get(k) for k in self.keys)

    @property
    def tags(self) -> tuple[str, ...]:
        return () if self.tag is None else (self.tag,)


@dataclass(frozen=True)
class GroupedColumns:
    """One declared metric, one column per group of dialogues by the score column ``by``
    (``n_facts``, ``stop_reason``, ...): see :mod:`lecode.report.grouping`."""

    metric: str
    by: str
    groups: tuple[Group, ...]

    def __post_init__(self) -> None:
        if not self.groups:
            raise ValueError(f"GroupedColumns of {self.metric!r}: no groups")
        labels = [g.label for g in self.groups]
        if len(set(labels)) != len(labels):
            raise ValueError(f"GroupedColumns of {self.metric!r}: group labels repeat")

    def metrics(self) -> tuple[Metric, ...]:
        from lecode.metrics import registry

        return group_columns(registry.get(self.metric), self.by, self.groups)

    @property
    def tags(self) -> tuple[str, ...]:
        return ()


Columns = MetricColumns | GroupedColumns


def _identifier(name: str) -> bool:
    return name.isidentifier() and name == name.lower()


@dataclass(frozen=True, kw_only=True)
class TableDeclaration:
    """One metrics table, declared once.

    ``name`` names its files (``<name>.md``, ``.csv``, ``.tex``, ``.provenance.json``) and
    ``lecode explain <name> ...``; ``order`` places it among the tables (the HTML report's
    order); ``title`` may name ``{reference}`` (the reference row of a ``paired`` table).
    ``rank`` marks each column's best and second best (direction from the metric's
    declaration). A table without rows is not written.
    """

    name: str
    title: str
    order: int
    rows: RowKind
    columns: Columns
    notes: tuple[Note, ...]
    description: str
    rank: bool = True
    row_header: str = "Models"
    setting_header: str = ""

    def __post_init__(self) -> None:
        where = f"table {self.name!r}"
        if not _identifier(self.name):
            raise ValueError(f"{where}: the name must be a lower-case Python identifier")
        if self.rows not in ROW_KINDS:
            raise ValueError(f"{where}: rows {self.rows!r} is not one of {sorted(ROW_KINDS)}")
        if not isinstance(self.columns, MetricColumns | GroupedColumns):
            raise ValueError(f"{where}: columns must be MetricColumns or GroupedColumns")
        if not self.title.strip() or not self.description.strip():
            raise ValueError(f"{where}: give a title and a description")

    def note_texts(self, ctx: NoteContext) -> tuple[str, ...]:
        """The notes as printed, each function called with ``ctx``."""
        return tuple(n if isinstance(n, str) else n(ctx) for n in self.notes)


# --------------------------------------------------------------------------- notes


def interval_note(ctx: NoteContext) -> str:
    plan = ctx.plan
    return (
        f"± half-width of the {plan.confidence:.0%} percentile bootstrap interval over cases "
        f"({plan.resamples} resamples, seed {plan.seed})"
    )


def coverage_note(ctx: NoteContext) -> str:
    return (
        f"† coverage n/N below {ctx.threshold:.0%} (n/N in Markdown and CSV); 0/N: no case has "
        "the metric (e.g. every dialogue failed); — not applicable (e.g. no judge configured); "
        "no ± with fewer than 2 cases"
    )


def rank_note(ctx: NoteContext) -> str:
    lower = [m.header for m in ctx.metrics if m.direction == "lower"]
    tail = f" ({', '.join(lower)}: lower is better)" if lower else ""
    return f"per column: best in bold, second in italics (Markdown) or underlined (LaTeX){tail}"


def delta_note(ctx: NoteContext) -> str:
    return (
        "differences are paired over the cases both systems have; p-values from the paired "
        "bootstrap, Holm-adjusted over all comparisons of this table; (n.s.) adjusted p >= "
        f"{ctx.alpha}"
    )


def scale_note(ctx: NoteContext) -> str:
    from lecode.metrics.registry import scale_note as registry_scale_note

    return registry_scale_note(ctx.metrics)


def compared_note(ctx: NoteContext) -> str:
    """On how many cases each difference row compares (the fewest and most over its
    columns)."""
    parts = []
    for r in ctx.rows:
        ns = [c.n for c in r.cells if c.n is not None]
        if not ns:
            continue
        lo, hi = min(ns), max(ns)
        parts.append(f"{r.label}{f' {r.setting}' if r.setting else ''} n = {lo}")
        if hi != lo:
            parts[-1] += f"–{hi}"
    return "cases compared (both systems have the metric): " + ("; ".join(parts) or "none")


def not_applicable_note(metrics: Sequence[Metric]) -> str:
    """The note of a table with "not applicable" counts (added when a cell has one)."""
    from lecode.metrics.registry import find

    named = []
    for m in metrics:
        source = getattr(m, "source", None) or m
        decl = find(source.key)
        if decl is not None and decl.not_applicable and decl.header not in named:
            named.append(f"{decl.header}: {decl.missing}")
    what = f" ({'; '.join(named)})" if named else ""
    return (
        f"‡ (k n/a): the metric does not apply to k of the N dialogues{what}; the mean is over "
        "the dialogues where it applies and has a value, and † compares n with N − k"
    )


def group_note(ctx: NoteContext) -> str:
    """How a grouped table's columns are formed."""
    cols = [m for m in ctx.metrics if getattr(m, "group", None) is not None]
    if not cols:
        return ""
    source = getattr(cols[0], "source", None)
    by = getattr(cols[0], "by", "")
    groups = "; ".join(f"{m.header}: {m.group.words(by)}" for m in cols)  # type: ignore[attr-defined]
    head = source.header if source is not None else "the metric"
    return (
        f"each column: mean {head} over the row's dialogues in the group ({groups}); n/N in "
        "a group counts its dialogues; n = 0: no dialogue in the group"
    )
