"""The specs of the evaluation core's steps: shard, simulate, match, judge, score, aggregate."""

from __future__ import annotations

from typing import Annotated, ClassVar

from lecode.config.base import RUNTIME_ONLY, Section
from lecode.config.roles import System
from lecode.config.sections import BertScoreSettings, RougeSettings
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec, Role


class ShardSpec(JobSpec):
    step: ClassVar[str] = "shard_dataset"
    test: FileRef
    n_shards: int
    limit: int | None


class SimulateSpec(JobSpec):
    step: ClassVar[str] = "simulate"
    expert: Role
    strategy: str
    client: Role
    client_strategy: str
    max_turns: int
    train: FileRef | None = None
    templates: dict[str, str] = {}
    fail_on_error: Annotated[float | None, RUNTIME_ONLY] = None
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()
    #: replicate indices of the expert and the client (``replicates:``): seed + index and
    #: their own cache keys; 0 is the main run
    replicate: int = 0
    client_replicate: int = 0


class EvaluateSpec(JobSpec):
    """The matcher or the judge over one shard's transcripts."""

    role: Role
    templates: dict[str, str] = {}
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()


class MatchSpec(EvaluateSpec):
    step: ClassVar[str] = "match_facts"


class JudgeSpec(EvaluateSpec):
    step: ClassVar[str] = "judge_advice"


class ScoreSpec(JobSpec):
    step: ClassVar[str] = "score_system"
    matcher: str
    judge: str | None
    rouge: RougeSettings
    bertscore: BertScoreSettings


class SystemFiles(Section):
    """One table row and the files its numbers come from."""

    system: System
    simulate: str  # spec digests of the row's jobs
    match: str
    judge: str | None
    score: str
    score_file: str
    transcripts: tuple[str, ...]
    matches: tuple[str, ...]
    judgements: tuple[str, ...]
    #: why the row is not run in this configuration (its cells show 0/N); None: it is run
    not_run: str | None = None


class ScoredRow(Section):
    """A row as aggregation reads it: which expert and strategy, and its score file. Labels
    are not part of it: a relabelled row reruns the tables only."""

    expert: str
    strategy: str
    score_file: str


class AggregateSpec(JobSpec):
    step: ClassVar[str] = "aggregate_scores"
    index: str
    rows: tuple[ScoredRow, ...]
