"""Per-job specifications: everything that decides one job's outputs, and nothing else.

Each step gets a typed spec derived from :class:`lecode.config.experiment.Settings` by
:class:`lecode.plan.Plan`. A spec's :meth:`~JobSpec.digest` (sha256 of its canonical JSON,
runtime-only settings left out) is the directory its outputs live in, the key of its
journal, and what provenance records; the rule hands the spec's JSON to the job
(``params: spec=...``), and the job reads nothing else of the configuration.

Runtime-only settings (concurrency, timeouts, prices, labels of a model, the response store's
place) are fields marked :data:`~lecode.config.base.RUNTIME_ONLY`, in the specs (``runtime``)
and in the sections they hold; :func:`~lecode.config.base.identity` leaves them out of every
digest, so changing them reruns nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

from lecode.config.base import RUNTIME_ONLY, Section
from lecode.config.base import identity as identity_data
from lecode.config.models import ModelEntry
from lecode.config.roles import System
from lecode.config.sections import (
    BertScoreSettings,
    LLMSettings,
    ReportSettings,
    RougeSettings,
    SFTSettings,
    SFTTrainSettings,
    SimulationSettings,
)

SPEC_VERSION = 1


def stable_hash(obj: Any, length: int = 10) -> str:
    """Short sha256 of the canonical JSON of ``obj``."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class FileRef(Section):
    """A file the job reads, named by its content."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: str | Path) -> FileRef:
        return cls(path=str(path), sha256=file_sha256(path))


class Role(Section):
    """A role played by a named model entry (its runtime-only keys do not enter digests).
    ``adapter``: for a vLLM entry served as a LoRA adapter, the adapter's identity
    (:meth:`lecode.plan.adapters.AdapterPlan.adapter_identity`); None otherwise."""

    name: str
    entry: ModelEntry
    adapter: str | None = None

    @property
    def is_llm(self) -> bool:
        return self.entry.is_llm


def roles_in(data: Any) -> list[Role]:
    """Every role a spec's data holds, at any depth (a replicate's spec holds the simulation's,
    the matcher's and the judge's): the models a job with that spec calls."""
    found: list[Role] = []

    def walk(x: Any) -> None:
        if isinstance(x, Role):
            found.append(x)
        elif isinstance(x, Section):
            for name in type(x).model_fields:
                walk(getattr(x, name))
        elif isinstance(x, dict):
            if set(x) == set(Role.model_fields):
                found.append(Role.model_validate(x))
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(data)
    return found


def roles_in_param(value: Any) -> list[Role]:
    """The roles of a rule's ``params: spec`` value: a spec's JSON holds them; other values
    (a digest that only marks a rerun) hold none."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return []
    return roles_in(json.loads(value))


class LLMRuntimeSpec(Section):
    """How a job reaches LLMs: the store, retries, and every model entry it may need (a LoRA
    entry needs its server's entry). Never part of a digest."""

    llm: LLMSettings = LLMSettings()
    models: dict[str, ModelEntry] = {}
    max_turns: int = SimulationSettings.model_fields["max_turns"].default
    #: adapter identity of each entry served as a LoRA adapter (enters its request keys)
    adapters: dict[str, str] = {}


S = TypeVar("S", bound="JobSpec")


class JobSpec(Section):
    """Base of every step's spec."""

    step: ClassVar[str]

    version: int = SPEC_VERSION
    code: str

    def identity(self) -> dict[str, Any]:
        """The canonical content of the digest: runtime-only fields left out."""
        return {"step": self.step, **identity_data(self)}

    def digest(self) -> str:
        return stable_hash(self.identity())

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls: type[S], text: str) -> S:
        return cls.model_validate_json(text)


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


class SFTDataSpec(JobSpec):
    """Training dialogues of one SFT variant (direct, keyfact, keyfact-e) from the training
    set: the question writer and the matcher that validates its questions (none for direct),
    the zero-shot expert templates the samples are rendered with, the writer's templates."""

    step: ClassVar[str] = "sft_data"
    variant: str
    train: FileRef
    max_turns: int
    writer: Role | None = None
    matcher: Role | None = None
    max_leak: float = SFTSettings.model_fields["max_leak"].default
    templates: dict[str, str] = {}
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()


class SFTTrainSpec(JobSpec):
    """LoRA training of one variant: its data (by the data job's digest), the base model (by
    path; the job records a content fingerprint in its provenance) and the hyperparameters."""

    step: ClassVar[str] = "sft_train"
    variant: str
    data: str
    base_model: str
    hyper: SFTTrainSettings


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


class SentinelSpec(JobSpec):
    """The judge-drift sentinel: the anchors re-judged under ``epoch`` (the digest of the
    judging it guards, so each new scoring run asks the endpoint and a replay reads the
    store), compared with the stored judgements."""

    step: ClassVar[str] = "judge_sentinel"
    judge: Role
    templates: dict[str, str] = {}
    anchors: FileRef
    stored: FileRef | None = None
    threshold: float
    tolerance: int
    epoch: str
    runtime: Annotated[LLMRuntimeSpec, RUNTIME_ONLY] = LLMRuntimeSpec()
