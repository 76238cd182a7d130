"""The skeleton every study builds on: a step declared once, and the jobs a plan derives
(what every step module imports: keep it small, it is in every step's fingerprint).

A study is a package ``lecode/<study>/`` with a ``plan.py`` and a ``steps/`` package. Each
module ``steps/<step>.py`` declares its step once, as ``STEP = Step(...)``: the spec type (whose
``step`` name is the module's), the primary output's path pattern, and how a job runs given its
files. The study's plan yields one :class:`Job` per job of the configured experiment: its spec,
the values of the output pattern's wildcards and the files it reads. Everything else is
derived: the Snakemake rule helpers (``workflow/rules/common.smk``: a rule names its step, and
its inputs, params and resources are looked up from the job its wildcards select), the one
script every step rule runs (``workflow/scripts/step.py``), the code fingerprint of the step
(:mod:`lecode.fingerprint`: the step module's import closure) and the API-key check (the
roles its spec holds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from lecode import paths
from lecode.specs import JobSpec, roles_in

S = TypeVar("S", bound=JobSpec)

#: A job's input files by name: one path, or several.
Inputs = Mapping[str, "str | tuple[str, ...]"]


class JobFiles(Protocol):
    """What a running job is handed: Snakemake's ``snakemake`` object has these (a test can
    pass a :class:`types.SimpleNamespace`)."""

    input: Any
    output: Any
    threads: int


@dataclass(frozen=True)
class Step(Generic[S]):
    """A step, declared once in its module ``lecode/<study>/steps/<step>.py``."""

    #: the spec type; its ``step`` is this step's name (and the rule's ``params: step``)
    spec: type[S]
    #: runs one job: its spec, and the files Snakemake (or a test) hands it
    run: Callable[[S, JobFiles], None]
    #: the primary output's path pattern (:mod:`lecode.paths`); its wildcards select the job
    output: str
    #: what a known input error is reported with (one line per problem, no traceback); None:
    #: errors propagate as they are
    guard: Callable[[str], AbstractContextManager[None]] | None = None

    @property
    def name(self) -> str:
        return self.spec.step

    def execute(self, spec_json: str, files: JobFiles) -> None:
        """Parse the job's spec and run it (under :attr:`guard`). A rule whose outputs do not
        have the declared form is refused before anything runs."""
        outputs = [str(o) for o in files.output]
        if not any(paths.matches(self.output, o) for o in outputs):
            raise ValueError(
                f"step {self.name}: none of the job's outputs {outputs} has the form its "
                f"declaration names ({self.output}); the rule and the step disagree"
            )
        guard = self.guard(self.name) if self.guard is not None else nullcontext()
        with guard:
            self.run(self.spec.from_json(spec_json), files)


@dataclass(frozen=True)
class Job:
    """One job of the configured experiment."""

    spec: JobSpec
    #: its primary output (a path named by the digests of its spec and of everything upstream)
    output: str
    #: the files the job reads, by name
    inputs: Inputs = field(default_factory=dict)
    #: the values of the rule's output pattern's wildcards (none for a single-job step whose
    #: rule names its output in full)
    wildcards: Mapping[str, str] = field(default_factory=dict)
    #: what tells it apart from the step's other jobs (``expert/strategy shard``)
    label: str = ""
    #: names of inputs that only need to exist (digest-named folders: their times do not count)
    ancient: frozenset[str] = frozenset()

    @property
    def step(self) -> str:
        return self.spec.step

    @property
    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        return self.step, tuple(sorted(self.wildcards.items()))

    @property
    def calls_llms(self) -> bool:
        """Whether the job may call an LLM endpoint: a role its spec holds is an LLM."""
        return any(r.is_llm for r in roles_in(self.spec))


class StudyPlan(Protocol):
    """What the composed plan asks of each study's plan."""

    def jobs(self) -> Iterable[Job]:
        """Every job of the study in this configuration (none when the study is off)."""
        ...
