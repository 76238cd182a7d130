"""The specs of the noise study's steps: replicate runs and the noise report."""

from __future__ import annotations

from typing import Annotated, ClassVar

from lecode.config.base import RUNTIME_ONLY, Section
from lecode.config.sections import BertScoreSettings
from lecode.evaluation.specs import JudgeSpec, MatchSpec, ScoreSpec, SimulateSpec
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec


class ReplicateSpec(JobSpec):
    """One run of the noise study on the fixed subset: the system simulated with its replicate
    indices (in the simulate spec, so in its digest, journal and path), matched, judged with
    ``judge_replicate`` and scored."""

    step: ClassVar[str] = "replicate"
    factor: str  # base | expert | client | judge
    index: int
    simulate: SimulateSpec
    match: MatchSpec
    judge: JudgeSpec | None = None
    judge_replicate: int = 0
    score: ScoreSpec
    test: FileRef
    cases: tuple[str, ...]
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()


class ReplicateRun(Section):
    """A finished replicate run as the noise job reads it."""

    expert: str
    strategy: str
    factor: str
    index: int
    digest: str
    dir: str


class NoiseSpec(JobSpec):
    """The variance decomposition and minimum detectable differences from the replicate runs."""

    step: ClassVar[str] = "noise"
    runs: tuple[ReplicateRun, ...]
    index: str
    test: FileRef
    vary: tuple[str, ...]
    alpha: float
    power: float
    not_applicable: tuple[str, ...] = ()
    #: BERTScore of every run's advice, computed here with one model load (None: off)
    bertscore: BertScoreSettings | None = None
