"""The spec of the report's steps (tables, figures, HTML report: one spec, three steps)."""

from __future__ import annotations

from typing import ClassVar

from lecode.config.sections import ReportSettings
from lecode.evaluation.specs import SystemFiles
from lecode.specs import FileRef, JobSpec, Role


class ReportSpec(JobSpec):
    """What the tables, figures and HTML report are built from (one spec, three steps)."""

    step: ClassVar[str] = "report"
    aggregate: str
    index: str
    train: FileRef
    test: FileRef
    paper: FileRef
    systems: tuple[SystemFiles, ...]
    roles: dict[str, Role]  # client, matcher, judge and each expert model, for provenance
    settings: ReportSettings
    #: score columns this run does not compute (no judge, BERTScore off): shown as "—"
    not_applicable: tuple[str, ...] = ()
    tables: str | None = None  # the tables directory (the HTML report reads it)


class TablesSpec(ReportSpec):
    step: ClassVar[str] = "tables"
    #: directories of tables other jobs built (Table 4, the noise report), copied in
    extra_tables: tuple[str, ...] = ()


class FiguresSpec(ReportSpec):
    step: ClassVar[str] = "figures"


class HtmlSpec(ReportSpec):
    step: ClassVar[str] = "html_report"
