"""Every table of the report: built as documents (each cell with its provenance) and written
to ``<out>/`` as Markdown, CSV, LaTeX and ``<table>.provenance.json``, plus metrics JSON.

:func:`build_documents` builds; :func:`write_tables` builds and writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import polars as pl

from lecode.config.sections import ReportSettings
from lecode.metrics.registry import with_tag
from lecode.recordio import atomic_write_text
from lecode.records import Case
from lecode.report import table_registry
from lecode.report.document import (
    Provenance,
    TableDocument,
    metrics_document,
    stats_document,
    usage_document,
    write_document,
)
from lecode.report.model import Row, Table
from lecode.report.paper import PaperNumbers, load_paper_numbers
from lecode.report.served import served_notes
from lecode.report.spec import (
    FEW_SHOT,
    ZERO_SHOT,
    Metric,
    ReportedSystem,
    coerce_systems,
)
from lecode.report.tables import BuildContext, build_declared, system_rows, table2
from lecode.report.usage import usage_summary
from lecode.stats import ResamplePlan

#: ``report:`` settings the tables do not read (Figure 7's base model).
NOT_FOR_TABLES = frozenset({"strategy_base"})


@dataclass(frozen=True)
class TableOptions:
    """How the tables are built and printed: the ``report:`` settings (bootstrap flattened,
    figure-only settings left out) plus the test level and the ZS/FS strategy names, with the
    paper's defaults."""

    coverage_threshold: float = 0.9
    resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    reference: str | None = None
    zero_shot: str = ZERO_SHOT
    few_shot: str = FEW_SHOT
    latex_ci: bool = False
    top_marked: int = 0

    @classmethod
    def from_settings(cls, report: ReportSettings) -> TableOptions:
        """From the typed ``report:`` settings (:class:`lecode.config.sections.ReportSettings`)."""
        return cls.from_params(report.model_dump(mode="json"))

    @classmethod
    def from_params(cls, report: Mapping[str, Any] | None) -> TableOptions:
        """From the ``report:`` mapping of params.yaml (``bootstrap:`` nested or flat)."""
        report = dict(report or {})
        flat = {**report, **dict(report.pop("bootstrap", None) or {})}
        flat.pop("bootstrap", None)
        for key in NOT_FOR_TABLES:
            flat.pop(key, None)
        names = {f.name for f in fields(cls)}
        unknown = set(flat) - names
        if unknown:
            raise ValueError(f"unknown report settings: {sorted(unknown)}")
        return cls(**flat)

    def plan(self) -> ResamplePlan:
        return ResamplePlan(resamples=self.resamples, seed=self.seed, confidence=self.confidence)


def build_tables(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem | Mapping[str, Any]],
    n_expected: int,
    *,
    settings: TableOptions | None = None,
    paper: PaperNumbers | None = None,
    plan: ResamplePlan | None = None,
) -> dict[str, Table]:
    """Every declared table (:data:`lecode.report.table_registry.TABLES`, in order) that has
    rows: Table 3, the paired table (more than one system), Tables 6/7 (a ZS/FS pair), the
    comparison with the paper (``paper``), and any table declared since."""
    settings = settings or TableOptions()
    ctx = BuildContext(
        scores,
        coerce_systems(systems),
        n_expected,
        plan=plan or settings.plan(),
        coverage_threshold=settings.coverage_threshold,
        alpha=settings.alpha,
        reference=settings.reference,
        zero_shot=settings.zero_shot,
        few_shot=settings.few_shot,
        paper=paper,
    )
    tables: dict[str, Table] = {}
    for decl in table_registry.TABLES:
        table = build_declared(decl, ctx)
        if table is not None:
            tables[decl.name] = table
    return tables


def metrics_json(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem | Mapping[str, Any]],
    n_expected: int,
    *,
    plan: ResamplePlan | None = None,
    metrics: Sequence[Metric] = with_tag("summary"),
) -> dict[str, Any]:
    """``{label: {metric: mean (display scale, 4 d.p.) or null, metric_n: n, ..., N: N}}``;
    a metric whose missing value means "not applicable" adds ``metric_na``, the dialogues it
    does not apply to."""
    sys_list = coerce_systems(systems)
    rows = system_rows(scores, sys_list, n_expected, metrics, plan=plan or ResamplePlan())
    return {r.label: _row_json(r, metrics, n_expected) for r in rows}


def _row_json(row: Row, metrics: Sequence[Metric], n_expected: int) -> dict[str, Any]:
    out: dict[str, Any] = {"expert": row.expert, "strategy": row.strategy, "N": n_expected}
    for m, c in zip(metrics, row.cells, strict=True):
        out[m.key] = None if c.value is None else round(c.value, 4)
        out[f"{m.key}_n"] = c.n
        if c.n_na is not None:  # a metric whose missing value means "not applicable"
            out[f"{m.key}_na"] = c.n_na
    return out


def build_documents(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem | Mapping[str, Any]],
    n_expected: int,
    *,
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    paper_numbers: str | Path | PaperNumbers | None = None,
    usage: pl.DataFrame | None = None,
    settings: TableOptions | None = None,
    provenance: Provenance | None = None,
    audit: pl.DataFrame | None = None,
) -> dict[str, TableDocument]:
    """Every table as a document: each cell together with its provenance.

    Table 2 needs both case lists; the comparison table needs ``paper_numbers``; the usage
    table needs ``usage`` (see :func:`lecode.report.usage.usage_frame`); the client audit and
    robustness tables need ``audit`` (:func:`lecode.audit.audit_frame`). ``provenance`` is the
    tables job's (:func:`lecode.report.provenance.table_provenance`); without one the documents name
    only the systems' labels and groups.
    """
    settings = settings or TableOptions()
    sys_list = coerce_systems(systems)
    prov = provenance if provenance is not None else Provenance.bare(sys_list)
    paper = (
        paper_numbers
        if isinstance(paper_numbers, PaperNumbers) or paper_numbers is None
        else load_paper_numbers(paper_numbers)
    )
    docs: dict[str, TableDocument] = {}
    if train_cases is not None and test_cases is not None:
        docs["table2"] = stats_document(table2(list(train_cases), list(test_cases), paper), prov)
    boot = {
        "resamples": settings.resamples,
        "seed": settings.seed,
        "confidence": settings.confidence,
    }
    tables = build_tables(scores, sys_list, n_expected, settings=settings, paper=paper)
    for name, table in tables.items():
        docs[name] = metrics_document(
            table, prov, threshold=settings.coverage_threshold, bootstrap=boot
        )
    if "table3" in docs:  # which model answered, where it is not the configured one
        doc = docs["table3"]
        served = served_notes(prov, [s.id for s in sys_list if s.id in doc.systems])
        if served:
            docs["table3"] = doc.model_copy(update={"notes": (*doc.notes, *served)})
    if usage is not None:
        summary = usage_summary(usage, sys_list)
        if audit is not None:
            summary = with_audit_column(summary, audit, sys_list)
        docs["usage"] = usage_document(summary, prov)
    if audit is not None:
        docs.update(audit_documents(scores, audit, sys_list, n_expected, settings, prov, boot))
    return docs


#: The usage table's diagnostics column: client answers the audit flagged.
FLAGGED_COLUMN = "flagged_answers"


def with_audit_column(
    summary: pl.DataFrame, audit: pl.DataFrame, systems: Sequence[ReportedSystem]
) -> pl.DataFrame:
    """The usage summary with ``flagged_answers`` (client answers the audit flagged) on the
    client rows, per system and over all systems; null on the other roles' rows."""
    from lecode.report.usage import ALL_SYSTEMS

    ids = {s.key: s.id for s in systems}
    counts: dict[str, int] = {}
    for rec in audit.iter_rows(named=True):
        key = ids.get((rec["expert"], rec["strategy"]))
        if key is not None:
            counts[key] = counts.get(key, 0) + int(rec["n_flagged"] or 0)
    total = sum(counts.values())
    values = [
        (total if r["label"] == ALL_SYSTEMS and not r["system"] else counts.get(r["system"], 0))
        if r["role"] == "client"
        else None
        for r in summary.iter_rows(named=True)
    ]
    return summary.with_columns(pl.Series(FLAGGED_COLUMN, values, dtype=pl.Int64))


def audit_documents(
    scores: pl.DataFrame,
    audit: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    settings: TableOptions,
    prov: Provenance,
    boot: Mapping[str, Any],
) -> dict[str, TableDocument]:
    """The ``audit`` and ``robustness`` tables' documents (see :mod:`lecode.report.audit`)."""
    from lecode.report.audit import AUDIT_AGGREGATION, audit_table, robustness_table

    plan = settings.plan()
    thr = settings.coverage_threshold
    audit_doc = metrics_document(
        audit_table(audit, systems, n_expected, plan=plan), prov, threshold=thr, bootstrap=boot
    )
    rows = []
    for r in audit_doc.rows:
        cells = []
        for c in r.cells:
            what = AUDIT_AGGREGATION.get(c.column)
            text = (
                f"share of the dialogue's client answers that are {what}, mean over the n "
                "dialogues with an answered question, ×100"
                if what
                else "share of the n dialogues none of whose client answers is flagged, ×100"
            )
            boot_text = c.description.split("; ", 1)[1] if "; " in c.description else ""
            cells.append(replace(c, description=f"{text}; {boot_text}"))
        rows.append(r.with_cells(tuple(cells)))
    audit_doc = audit_doc.model_copy(update={"rows": tuple(rows)})
    robust = robustness_table(scores, audit, systems, n_expected, plan=plan)
    return {
        "audit": audit_doc,
        "robustness": metrics_document(robust, prov, threshold=thr, bootstrap=boot),
    }


def write_tables(
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem | Mapping[str, Any]],
    n_expected: int,
    out_dir: str | Path,
    *,
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    paper_numbers: str | Path | PaperNumbers | None = None,
    usage: pl.DataFrame | None = None,
    settings: TableOptions | None = None,
    metrics_path: str | Path | None = None,
    provenance: Provenance | None = None,
    audit: pl.DataFrame | None = None,
) -> dict[str, list[Path]]:
    """Write every table under ``out_dir`` (Markdown, CSV, LaTeX and its provenance document,
    all from one :class:`~lecode.report.document.TableDocument`) and the metrics JSON
    (``metrics_path``, default ``<out>/metrics.json``); returns the written paths by table."""
    settings = settings or TableOptions()
    out = Path(out_dir)
    sys_list = coerce_systems(systems)
    docs = build_documents(
        scores,
        sys_list,
        n_expected,
        train_cases=train_cases,
        test_cases=test_cases,
        paper_numbers=paper_numbers,
        usage=usage,
        settings=settings,
        provenance=provenance,
        audit=audit,
    )
    written = {
        name: write_document(doc, out, latex_ci=settings.latex_ci, top=settings.top_marked)
        for name, doc in docs.items()
    }
    mpath = Path(metrics_path) if metrics_path is not None else out / "metrics.json"
    data = metrics_json(scores, sys_list, n_expected, plan=settings.plan())
    atomic_write_text(mpath, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
    written["metrics"] = [mpath]
    return written
