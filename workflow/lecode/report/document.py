"""A table and the provenance of each of its numbers, as one versioned document.

The tables step builds every cell together with its provenance (:func:`metrics_document`,
:func:`stats_document`, :func:`usage_document`) and writes ``<table>.md``, ``.csv``, ``.tex``
and ``<table>.provenance.json`` from the same :class:`TableDocument` (:func:`write_document`):
the Markdown, CSV and LaTeX are rendered from the document, so a cell's provenance and the
number printed for it cannot disagree. ``lecode explain`` and the HTML report read the
documents back through :func:`load` / :func:`load_all` and the same classes.

A document::

    {"schema_version": 3, "table": "table3", "layout": "metrics", "title": ...,
     "spec_digest": <TablesSpec digest>,
     "run":     {git, packages, dataset, paper, aggregate, settings},
     "systems": {"<expert>/<strategy>": {system, jobs, roles, files, store, ...}},
     "columns": [{key, header, ...}],
     "rows":    [{label, group, setting, kind, systems, delta_of,
                  cells: [{id, column, value, display, ci_low, ci_high, n, N, aggregation,
                           description, status, ...}]}],
     "notes": [...]}

``systems`` holds the systems the table's rows name; ``run`` is what every cell shares. Rows
and cells are :class:`lecode.report.model.Row` and :class:`lecode.report.model.Cell`, the same
the tables are built from; a cell's ``aggregation`` says how its number was computed and its
``description`` says it in words.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lecode.config.roles import System
from lecode.config.sections import ReportSettings
from lecode.recordio import atomic_write_text
from lecode.records import Served
from lecode.report.model import PAPER, Aggregation, Cell, Row, RowFlags, StatsTable, Table
from lecode.report.spec import Metric
from lecode.specs import FileRef

SCHEMA_VERSION = 3
SUFFIX = ".provenance.json"
Layout = Literal["metrics", "stats", "usage"]


class DocumentError(ValueError):
    """A provenance document is missing, of another schema version, or malformed."""


def cell_id(table: str, label: str, setting: str, column: str) -> str:
    """The id of a cell: in its document, the HTML report's ``data-cell`` and ``explain``."""
    return f"{table}|{label}|{setting}|{column}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- run and systems


class GitState(_Model):
    """The last commit that changed the code, configuration or data (``scope``), and whether
    ``scope`` had uncommitted changes; both ``None`` outside a git repository."""

    commit: str | None
    dirty: bool | None
    scope: tuple[str, ...]


class RecordsFile(_Model):
    """A JSONL file of records, named by its content, with its number of records."""

    path: str
    sha256: str
    records: int


class DatasetInfo(_Model):
    train: FileRef
    test: FileRef
    index: FileRef
    shards: tuple[RecordsFile, ...]
    n_cases: int
    limit: int | None = None


class RunInfo(_Model):
    """What every cell of every table shares."""

    git: GitState
    packages: dict[str, str]
    dataset: DatasetInfo
    paper: FileRef
    aggregate: FileRef
    settings: ReportSettings


class JobDigests(_Model):
    """Spec digests of the jobs a system's numbers come from (their outputs' directories)."""

    simulate: str
    match: str
    judge: str | None
    score: str


class RoleInfo(_Model):
    """A role's model entry as it enters the job digests (runtime-only settings left out)."""

    model: str
    strategy: str | None = None
    entry: dict[str, Any]


class SystemFileRefs(_Model):
    score: FileRef
    transcripts: tuple[RecordsFile, ...]
    matches: tuple[RecordsFile, ...]
    judgements: tuple[RecordsFile, ...]


class StoreUse(_Model):
    """LLM responses of one role, and how many of them came from the response store."""

    responses: int
    from_store: int


class SystemInfo(_Model):
    """One table row's system: its jobs, models and files, and what its records say."""

    system: System
    jobs: JobDigests | None = None
    roles: dict[str, RoleInfo] = {}
    files: SystemFileRefs | None = None
    store: dict[str, StoreUse] = {}
    stop_reasons: dict[str, int] = {}
    match_status: dict[str, int] = {}
    judge_status: dict[str, int] = {}
    #: What the roles reported about themselves in the transcripts (a key with several
    #: values keeps them all): served model ids, system fingerprints, template hashes.
    reported: dict[str, str | list[str]] = {}
    #: Per role, every model id and system fingerprint the endpoint's replies named, counted.
    served: dict[str, Served] = {}


class Provenance(_Model):
    """The document-level provenance shared by every table of one tables job."""

    spec_digest: str | None = None
    run: RunInfo | None = None
    systems: dict[str, SystemInfo] = {}

    @classmethod
    def bare(cls, systems: Sequence[Any]) -> Provenance:
        """Without a spec (library use, tests): the systems' labels and groups only."""
        out = {}
        for s in systems:
            sys_ = System(expert=s.expert, strategy=s.strategy, label=s.label, group=s.group)
            out[s.id] = SystemInfo(system=sys_)
        return cls(systems=out)


# --------------------------------------------------------------------------- columns


class Column(_Model):
    key: str
    header: str  # as printed (``AT↓``)
    name: str = ""  # the metric's short name (``AT``)
    scale: float | None = None
    direction: Literal["higher", "lower"] | None = None
    section: str | None = None
    #: A grouped column (:class:`lecode.report.grouping.GroupColumn`): the metric it averages,
    #: the score column it groups by, and its group (``lo``-``hi`` or ``value``).
    source: str | None = None
    group_by: str | None = None
    group_lo: int | None = None
    group_hi: int | None = None
    group_value: str | None = None

    @property
    def display_header(self) -> str:
        return self.header

    @property
    def metric_key(self) -> str:
        """The score column this column's cells are computed from."""
        return self.source or self.key

    def group(self) -> Any:
        """The :class:`lecode.report.grouping.Group` of a grouped column, else None."""
        from lecode.report.grouping import Group

        if self.group_by is None:
            return None
        return Group(self.header, lo=self.group_lo, hi=self.group_hi, value=self.group_value)


class TableDocument(_Model, RowFlags):
    schema_version: int
    table: str
    layout: Layout
    title: str
    spec_digest: str | None = None
    run: RunInfo | None = None
    systems: dict[str, SystemInfo] = {}
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()
    row_header: str = "Models"
    setting_header: str = ""
    coverage_threshold: float | None = None

    @field_validator("schema_version")
    @classmethod
    def _current(cls, v: int) -> int:
        if v != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {v}, but this lecode reads schema_version {SCHEMA_VERSION}: "
                "rebuild the tables (make all_tables)"
            )
        return v

    # -- reading -----------------------------------------------------------------------------

    def cells(self) -> Iterator[tuple[Row, Cell]]:
        """Every ``(row, cell)`` pair, row by row."""
        for r in self.rows:
            for c in r.cells:
                yield r, c

    def cell(self, cid: str) -> Cell:
        for _, c in self.cells():
            if c.id == cid:
                return c
        raise KeyError(f"{self.table}: no cell {cid!r}")

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    # -- what the renderers read (as of :class:`lecode.report.model.Table`) -----------------

    @property
    def name(self) -> str:
        return self.table

    def render(self, *, latex_ci: bool = False, top: int = 0) -> dict[str, str]:
        """``{extension: text}`` of the table's Markdown, CSV and (but usage) LaTeX."""
        from lecode.report import render
        from lecode.report.usage import render_usage_csv, render_usage_markdown

        if self.layout == "metrics":
            thr = self.coverage_threshold
            thr = render.DEFAULT_THRESHOLD if thr is None else thr
            return {
                "md": render.render_markdown(self, threshold=thr),
                "csv": render.render_csv(self, threshold=thr),
                "tex": render.render_latex(self, threshold=thr, ci=latex_ci, top=top),
            }
        if self.layout == "stats":
            return {
                "md": render.render_plain_markdown(self),
                "csv": render.render_stats_csv(self),
                "tex": render.render_stats_latex(self),
            }
        return {"md": render_usage_markdown(self), "csv": render_usage_csv(self)}

    def dumps(self) -> str:
        data = self.model_dump(mode="json")
        return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


# --------------------------------------------------------------------------- building


def _finite(x: float | None) -> float | None:
    return None if x is None or x != x else x


def metric_description(
    aggregation: Aggregation,
    metric: Metric,
    settings: Mapping[str, Any],
    delta_of: tuple[str, str] | None = None,
) -> str:
    """How a metrics cell's number was computed, in words (the one place this is said for
    score means, differences and published numbers; the client audit, Table 4 and the
    adjacent-rows table describe their own cells)."""
    boot = (
        f"percentile bootstrap over dialogues ({settings['resamples']} resamples, "
        f"seed {settings['seed']}, {settings['confidence']} interval)"
    )
    factor = "" if metric.scale == 1 else f", ×{metric.scale:g}"
    source = getattr(metric, "source", None) or metric
    group = getattr(metric, "group", None)
    if aggregation in ("mean", "subset_mean", "group_mean"):
        where = "" if group is None else f" with {group.words(getattr(metric, 'by', ''))}"
        return (
            f"mean over the n test dialogues{where} where {source.key} is present{factor} "
            f"({missing_words(source)}); {boot}"
        )
    if aggregation == "paired_difference":
        a, b = delta_of or ("a", "b")
        return (
            f"mean over the n dialogues both {a} and {b} have of the paired difference "
            f"{a} − {b} of {metric.key}{factor}; {boot}; two-sided paired bootstrap p, "
            "Holm-adjusted over the table"
        )
    if aggregation == "published":
        return "the published value (run.paper), not computed here"
    if aggregation == "offset":
        return (
            f"ours minus the published value of {metric.key} (run.paper); the interval is ours "
            "shifted by the published value; (n.s.) when the published value lies inside ours"
        )
    return f"{aggregation.replace('_', ' ')} of {metric.key}{factor}; {boot}"


def missing_words(metric: Metric) -> str:
    """What a missing value of ``metric`` means, as its declaration says."""
    from lecode.metrics.registry import find

    decl = find(metric.key)
    if decl is None or not decl.not_applicable:
        return "missing = failed dialogue, no advice or no judge; never zero"
    return (
        f"where it does not apply ({decl.missing}) the dialogue is left out and counted apart "
        "as n/a, not as a failure; missing otherwise = failed dialogue, no advice or no judge; "
        "never zero"
    )


def _column(m: Metric) -> Column:
    source = getattr(m, "source", None)
    group = getattr(m, "group", None)
    return Column(
        key=m.key,
        header=m.display_header,
        name=m.header,
        scale=m.scale,
        direction=m.direction,
        section=m.section,
        source=None if source is None else source.key,
        group_by=None if group is None else getattr(m, "by", None),
        group_lo=None if group is None else group.lo,
        group_hi=None if group is None else group.hi,
        group_value=None if group is None else group.value,
    )


def _documented(provenance: Provenance, used: Sequence[str]) -> dict[str, SystemInfo]:
    return {k: provenance.systems[k] for k in dict.fromkeys(used) if k in provenance.systems}


def metrics_document(
    table: Table,
    provenance: Provenance,
    *,
    threshold: float,
    bootstrap: Mapping[str, Any],
) -> TableDocument:
    """The document of a metrics table: each cell with what it was computed from."""
    from lecode.report.render import cell_state, markdown_cell, shown_interval

    columns = tuple(_column(m) for m in table.metrics)
    rows = []
    for r in table.rows:
        cells = []
        for m, c in zip(table.metrics, r.cells, strict=True):
            interval = shown_interval(c)
            cells.append(
                replace(
                    c,
                    id=cell_id(table.name, r.label, r.setting, m.key),
                    column=m.key,
                    value=_finite(c.value),
                    display=markdown_cell(c, r, threshold),
                    ci_low=None if interval is None else interval[0],
                    ci_high=None if interval is None else interval[1],
                    p_value=_finite(c.p_value),
                    p_adjusted=_finite(c.p_adjusted),
                    status=cell_state(c),
                    description=metric_description(c.aggregation, m, bootstrap, r.delta_of),
                )
            )
        rows.append(r.with_cells(tuple(cells)))
    used = [k for r in table.rows for k in r.systems]
    return TableDocument(
        schema_version=SCHEMA_VERSION,
        table=table.name,
        layout="metrics",
        title=table.title,
        spec_digest=provenance.spec_digest,
        run=provenance.run,
        systems=_documented(provenance, used),
        columns=columns,
        rows=tuple(rows),
        notes=table.notes,
        row_header=table.row_header,
        setting_header=table.setting_header,
        coverage_threshold=threshold,
    )


def stats_document(table: StatsTable, provenance: Provenance) -> TableDocument:
    """The document of Table 2 (dataset statistics of the configured dataset files)."""
    from lecode.report.render import fmt_stat

    keys = table.keys or table.rows
    col_keys = table.column_keys or table.columns
    rows = []
    rows_in = zip(table.rows, keys, table.values, table.formats, strict=True)
    for i, (name, key, values, fmt) in enumerate(rows_in):
        cells = []
        for j, (v, col) in enumerate(zip(values, col_keys, strict=True)):
            value = _finite(v)
            aggregation = table.aggregation(i, j)
            over = "train and test together" if col == "total" else f"the {col} split"
            cells.append(
                Cell(
                    id=cell_id(table.name, name, "", f"{key}:{col}"),
                    column=col,
                    value=value,
                    display=fmt_stat(fmt, v),
                    status="value" if value is not None else "not_applicable",
                    aggregation=aggregation,
                    description="the published value (run.paper), not computed here"
                    if aggregation == "published"
                    else f"{name} over {over} of the dataset files (run.dataset)",
                )
            )
        rows.append(Row(label=name, kind="dataset", key=key, format=fmt, cells=tuple(cells)))
    return TableDocument(
        schema_version=SCHEMA_VERSION,
        table=table.name,
        layout="stats",
        title=table.title,
        spec_digest=provenance.spec_digest,
        run=provenance.run,
        columns=tuple(
            Column(key=k, header=h) for k, h in zip(col_keys, table.columns, strict=True)
        ),
        rows=tuple(rows),
        notes=table.notes,
        row_header=table.row_header,
    )


def usage_document(summary: pl.DataFrame, provenance: Provenance) -> TableDocument:
    """The usage table (see :func:`lecode.report.usage.usage_summary`) as a document."""
    from lecode.report.usage import HIDDEN, usage_text

    everyone = tuple(provenance.systems)
    value_cols = [c for c in summary.columns if c not in ("label", "role", *HIDDEN)]
    rows = []
    for rec in summary.iter_rows(named=True):
        systems = (rec["system"],) if rec.get("system") else everyone
        role = rec["role"]
        cells = tuple(
            Cell(
                id=cell_id("usage", rec["label"], role, col),
                column=col,
                value=rec[col],
                display=usage_text(col, rec[col]),
                aggregation="count",
                description=(
                    f"distinct dialogues with a usage entry of role {role}"
                    if col == "dialogues"
                    else "client answers the fidelity audit flagged (lecode.audit), summed over "
                    "the dialogues; — on the other roles"
                    if col == "flagged_answers"
                    else f"sum of {col} of role {role} over the usage ledgers of the "
                    "transcripts, matches and judgements"
                ),
            )
            for col in value_cols
        )
        rows.append(
            Row(label=rec["label"], setting=role, kind="usage", systems=systems, cells=cells)
        )
    return TableDocument(
        schema_version=SCHEMA_VERSION,
        table="usage",
        layout="usage",
        title="Usage and cost per role",
        spec_digest=provenance.spec_digest,
        run=provenance.run,
        systems=_documented(provenance, [k for r in rows for k in r.systems]),
        columns=tuple(Column(key=c, header=c) for c in value_cols),
        rows=tuple(rows),
        notes=(
            "cost in the price units of the endpoint configuration",
            "dialogues = distinct (system, case) pairs",
        ),
        row_header="label",
        setting_header="role",
    )


# --------------------------------------------------------------------------- files


def document_path(out_dir: str | Path, table: str) -> Path:
    return Path(out_dir) / f"{table}{SUFFIX}"


def write_document(
    doc: TableDocument, out_dir: str | Path, *, latex_ci: bool = False, top: int = 0
) -> list[Path]:
    """``<table>.md``, ``.csv``, ``.tex`` and ``.provenance.json``, all from ``doc``."""
    out = Path(out_dir)
    written = []
    for ext, text in doc.render(latex_ci=latex_ci, top=top).items():
        path = out / f"{doc.table}.{ext}"
        atomic_write_text(path, text)
        written.append(path)
    path = document_path(out, doc.table)
    atomic_write_text(path, doc.dumps())
    written.append(path)
    return written


def parse(text: str, source: str = "<document>") -> TableDocument:
    try:
        return TableDocument.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<top level>'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()[:5]
        )
        raise DocumentError(
            f"{source}: not a provenance document this lecode reads: {problems}"
        ) from None


def load(tables_dir: str | Path, table: str) -> TableDocument:
    path = document_path(tables_dir, table)
    if not path.is_file():
        have = sorted(p.name[: -len(SUFFIX)] for p in Path(tables_dir).glob(f"*{SUFFIX}"))
        raise DocumentError(
            f"{path}: no provenance for table {table!r}"
            + (f" (tables with provenance: {', '.join(have)})" if have else "")
        )
    return parse(path.read_text(encoding="utf-8"), str(path))


def load_all(tables_dir: str | Path) -> dict[str, TableDocument]:
    return {
        p.name[: -len(SUFFIX)]: parse(p.read_text(encoding="utf-8"), str(p))
        for p in sorted(Path(tables_dir).glob(f"*{SUFFIX}"))
    }


__all__ = [
    "PAPER",
    "SCHEMA_VERSION",
    "SUFFIX",
    "Column",
    "DocumentError",
    "Provenance",
    "RunInfo",
    "SystemInfo",
    "TableDocument",
    "cell_id",
    "load",
    "load_all",
    "metrics_document",
    "stats_document",
    "usage_document",
    "write_document",
]
