"""The configured experiment: every study's plan, composed, and the index of their jobs.

The Snakefile builds one :class:`Plan` and asks it for paths, specs and jobs; the library asks
the same object, so what the DAG schedules and what provenance records cannot disagree. Each
study plans its own jobs (``lecode/<study>/plan.py``) and is handed what it uses of the
others; nothing here decides a spec or a path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from pathlib import Path

from lecode.config.experiment import Settings
from lecode.corpus.plan import CorpusPlan
from lecode.evaluation.plan import EvaluationPlan
from lecode.noise.plan import NoisePlan
from lecode.plan.index import JobIndex
from lecode.plan.jobs import Job, StudyPlan
from lecode.plan.roles import Roles
from lecode.reliability.plan import ReliabilityPlan
from lecode.report.plan import PAPER_NUMBERS, ReportPlan
from lecode.sentinel.plan import SentinelPlan
from lecode.sft.plan import SFTPlan


class Plan:
    """All studies of one configured experiment."""

    def __init__(self, settings: Settings, paper: str | Path = PAPER_NUMBERS) -> None:
        self.settings = settings
        self.roles = Roles(settings)
        self.sft = SFTPlan(settings, self.roles)
        # an adapter this workflow trains is identified by its training (known before it runs)
        self.roles.training_digest = self.sft.training_digest
        self.evaluation = EvaluationPlan(settings, self.roles)
        self.reliability = ReliabilityPlan(settings, self.roles, paper=paper)
        self.noise = NoisePlan(settings, self.roles, self.evaluation)
        self.sentinel = SentinelPlan(settings, self.roles, self.evaluation)
        self.paper = str(paper)
        self.index = JobIndex(self.studies())

    @cached_property
    def corpus(self) -> CorpusPlan:
        """The dataset build (reads ``corpus.transcripts`` when first asked)."""
        return CorpusPlan(self.settings, self.roles)

    @cached_property
    def report(self) -> ReportPlan:
        return ReportPlan(
            self.settings,
            self.roles,
            self.evaluation,
            paper=self.paper,
            extra_tables=self.extra_tables(),
        )

    def extra_tables(self) -> tuple[str, ...]:
        """Tables built outside the tables job that it copies in: Table 4, the noise report,
        the judge-drift sentinel and the annotation agreement of the dataset build, each when
        enabled."""
        out = []
        if self.reliability.reliability_enabled:
            out.append(self.reliability.table4_dir)
        if self.noise.replicates_enabled:
            out.append(self.noise.noise_dir)
        if self.sentinel.sentinel_enabled:
            out.append(self.sentinel.sentinel_dir)
        if self.settings.corpus.reviewers:
            out.append(self.corpus.agreement_dir)
        return tuple(out)

    def studies(self) -> Mapping[str, Callable[[], StudyPlan]]:
        """Each study by the name of its package (steps are found in ``lecode/<study>/steps``)."""
        return {
            "evaluation": lambda: self.evaluation,
            "report": lambda: self.report,
            "sft": lambda: self.sft,
            "reliability": lambda: self.reliability,
            "noise": lambda: self.noise,
            "sentinel": lambda: self.sentinel,
            "corpus": lambda: self.corpus,
        }

    def job(self, step: str, wildcards: Mapping[str, str]) -> Job | None:
        """The job of ``step`` whose output the wildcards name; None: no such job here."""
        return self.index.find(step, wildcards)

    def jobs(self, step: str) -> Iterator[Job]:
        """The jobs of ``step``."""
        return self.index.of_step(step)

    def study_jobs(self, study: str) -> list[Job]:
        """The jobs of ``study`` in the order it plans them."""
        return list(self.index.of_study(study).values())

    @property
    def warnings(self) -> list[str]:
        return self.roles.warnings
