"""The report's jobs: the tables, the figures and the HTML report, built from every system's
files (one spec, three steps), derived once from the settings (:class:`ReportPlan`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from lecode import paths
from lecode.config.experiment import Settings
from lecode.fingerprint import step_code
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles
from lecode.report.specs import FiguresSpec, HtmlSpec, ReportSpec, TablesSpec
from lecode.specs import FileRef

if TYPE_CHECKING:
    from lecode.evaluation.plan import EvaluationPlan

#: The paper's numbers the tables print beside ours.
PAPER_NUMBERS = "data/paper_numbers.csv"


class ReportPlan:
    """Specs, paths and jobs of the report. ``extra_tables``: directories of tables other
    studies build (Table 4, the noise report, the judge-drift sentinel, the annotation
    agreement) that the tables job copies in."""

    def __init__(
        self,
        settings: Settings,
        roles: Roles,
        evaluation: EvaluationPlan,
        *,
        paper: str | Path = PAPER_NUMBERS,
        extra_tables: tuple[str, ...] = (),
    ) -> None:
        self.settings = settings
        self.roles = roles
        self.evaluation = evaluation
        self.paper = str(paper)
        self.extra_tables = extra_tables

    def _report(self, cls: type[ReportSpec], tables: str | None = None) -> ReportSpec:
        s = self.settings
        ev = self.evaluation
        names = {"client": s.client.model, "matcher": s.matcher.model}
        if s.judge is not None:
            names["judge"] = s.judge.model
        roles = {k: self.roles.role(v) for k, v in names.items()}
        roles.update({f"expert:{x.expert}": self.roles.role(x.expert) for x in ev.table_systems})
        return cls(
            aggregate=ev.aggregate_file,
            index=ev.index_file,
            train=FileRef.of(s.dataset.train),
            test=FileRef.of(s.dataset.test),
            paper=FileRef.of(self.paper),
            systems=ev.system_files,
            roles=roles,
            settings=s.report,
            not_applicable=ev.tables_not_applicable(),
            tables=tables,
            code=step_code(cls.step),
        )

    @cached_property
    def tables_spec(self) -> TablesSpec:
        spec = self._report(TablesSpec)
        return spec.model_copy(update={"extra_tables": self.extra_tables})  # type: ignore[return-value]

    @cached_property
    def tables_dir(self) -> str:
        return paths.format(paths.TABLES, tcfg=self.tables_spec.digest())

    @cached_property
    def figures_spec(self) -> FiguresSpec:
        return self._report(FiguresSpec)  # type: ignore[return-value]

    @cached_property
    def html_spec(self) -> HtmlSpec:
        return self._report(HtmlSpec, tables=self.tables_dir)  # type: ignore[return-value]

    @cached_property
    def figures_dir(self) -> str:
        return paths.format(paths.FIGURES, fcfg=self.figures_spec.digest())

    @cached_property
    def plots_dir(self) -> str:
        return paths.format(paths.PLOTS, fcfg=self.figures_spec.digest())

    @property
    def tables_manifest(self) -> str:
        return self.tables_dir + ".manifest.json"

    @property
    def figures_manifest(self) -> str:
        return str(Path(self.figures_dir).parent / "manifest.json")

    @cached_property
    def html_file(self) -> str:
        return paths.format(paths.HTML, hcfg=self.html_spec.digest())

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        yield self._job(self.tables_spec, self.tables_dir)
        yield self._job(self.figures_spec, self.figures_dir)
        html = self._job(self.html_spec, self.html_file)
        yield Job(
            html.spec,
            html.output,
            inputs={
                **html.inputs,
                "figures": self.figures_dir,
                "figures_manifest": self.figures_manifest,
            },
            ancient=html.ancient | {"figures"},
        )

    @staticmethod
    def _job(spec: ReportSpec, output: str) -> Job:
        """Everything a report step reads (all named by its spec)."""
        inputs: dict[str, str | tuple[str, ...]] = {
            "aggregate": spec.aggregate,
            "index": spec.index,
            "train": spec.train.path,
            "test": spec.test.path,
            "paper": spec.paper.path,
            "transcripts": tuple(p for x in spec.systems for p in x.transcripts),
            "matches": tuple(p for x in spec.systems for p in x.matches),
            "judgements": tuple(p for x in spec.systems for p in x.judgements),
            "scores": tuple(x.score_file for x in spec.systems if x.not_run is None),
        }
        ancient = set()
        if spec.tables:
            # A folder named by its spec digest: what it holds is decided by that digest, and
            # folders have no checksum in Snakemake's records, so their times must not count.
            inputs["tables"] = spec.tables
            inputs["tables_manifest"] = spec.tables + ".manifest.json"  # its rewrites count
            ancient.add("tables")
        extra = getattr(spec, "extra_tables", ())
        if extra:
            inputs["extra_tables"] = tuple(extra)
            ancient.add("extra_tables")
        return Job(spec, output, inputs, ancient=frozenset(ancient))
