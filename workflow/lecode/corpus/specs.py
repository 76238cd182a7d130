"""The specs of the dataset-building steps (their digests name their output directories)."""

from __future__ import annotations

from typing import ClassVar

from lecode.config.corpus import CorpusAssign, CorpusSplit
from lecode.config.sections import RougeSettings
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec, Role


class AnnotateSpec(JobSpec):
    """One pre-annotation step of one shard of transcript files. ``previous``: the digest of
    the step whose output this one reads (None for role identification)."""

    shard: str
    transcripts: tuple[FileRef, ...]
    speaker_tags: tuple[str, ...] = ()
    role_confidence: float = 0.5
    #: roles a person gave (``<review_dir>/roles.csv``) for this shard's dialogues
    role_overrides: dict[str, dict[str, str]] = {}
    annotator: Role | None
    #: ``{template file: digest}`` of the prompts the step sends (empty for the offline rules)
    templates: dict[str, str] = {}
    previous: str | None = None
    runtime: LLMRuntimeSpec = LLMRuntimeSpec()
    #: where each dialogue's record is kept by the digest of its own input (None: nowhere)
    cache: str | None = None


class RolesSpec(AnnotateSpec):
    step: ClassVar[str] = "corpus_roles"


class Stage1Spec(AnnotateSpec):
    step: ClassVar[str] = "corpus_stage1"


class Stage2Spec(AnnotateSpec):
    step: ClassVar[str] = "corpus_stage2"


class ReviewExportSpec(JobSpec):
    """The pre-annotation of every dialogue as review spreadsheets (CSV)."""

    step: ClassVar[str] = "corpus_review_export"
    pre: str  # the stage-2 set digest (covers every earlier step)
    assign: CorpusAssign = CorpusAssign()  # who reviews which dialogue (assignments.csv)
    labelstudio_project: str = "lecode"  # the mark of the Label Studio tasks


class AssembleSpec(JobSpec):
    """Reviewed records -> LeCoDe JSONL, split, Table 2 statistics. ``reviewers`` in priority
    order (the final reviewer first); ``adjudicators`` decide where reviewers disagree."""

    step: ClassVar[str] = "corpus_assemble"
    pre: str
    final: str | None
    reviews: tuple[FileRef, ...]
    split: CorpusSplit
    reviewers: tuple[str, ...] = ()
    adjudicators: tuple[str, ...] = ()
    rule: str = "priority"


class AgreementSpec(JobSpec):
    """Agreement between the reviewers and between the pre-annotation and each review."""

    step: ClassVar[str] = "corpus_agreement"
    pre: str
    reviewers: tuple[str, ...]
    reviews: tuple[FileRef, ...]
    rouge: RougeSettings
    fact_threshold: float
