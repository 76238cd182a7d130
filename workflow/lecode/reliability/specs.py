"""The specs of the client-reliability study's steps (Table 4)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from lecode.config.base import RUNTIME_ONLY, Section
from lecode.config.sections import ReportSettings
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec, Role


class ReliabilitySampleSpec(JobSpec):
    """The consultations, contexts and questions of the client-reliability study (Table 4):
    sampled from the training set; the questions from the dialogues or from a writer LLM."""

    step: ClassVar[str] = "reliability_sample"
    train: FileRef
    n_cases: int
    seed: int
    context_rounds: int
    questions: int
    writer: Role | None = None
    #: hand-written questions per consultation (reliability.questions_file), named by content
    questions_file: FileRef | None = None
    templates: dict[str, str] = {}
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()


class ReliabilitySpec(JobSpec):
    """One client model x strategy of the reliability study: its answers to the sampled
    questions, audited, and judged when a judge is configured."""

    step: ClassVar[str] = "reliability"
    sample: str  # the sample job's digest
    client: Role
    client_strategy: str
    judge: Role | None = None
    templates: dict[str, str] = {}
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()


class ReliabilityRun(Section):
    """One column entry of Table 4: a client model x strategy and the file of its answers."""

    client: str
    label: str
    paper_label: str | None = None
    strategy: str
    digest: str
    file: str


class Table4Spec(JobSpec):
    """Table 4 (client-simulator reliability) from the study's answer files."""

    step: ClassVar[str] = "table4"
    items: str
    sample: str
    runs: tuple[ReliabilityRun, ...]
    roles: dict[str, Role]
    paper: FileRef
    settings: ReportSettings
