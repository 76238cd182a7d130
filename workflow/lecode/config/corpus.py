"""The ``corpus:`` section of ``params.yaml``: building a dataset from transcripts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, field_validator, model_validator

from lecode.config.base import Name, Section

#: The speaker tags a transcript may use, as regular expressions (``corpus.speaker_tags``).
DEFAULT_SPEAKER_TAGS: tuple[str, ...] = (
    r"(?:说话人|发言人|讲话人|[Ss]peaker|SPEAKER)[ _]?[0-9A-Za-z]{1,3}",
    r"用户|律师|客户|当事人|主播|连麦者|主持人|家属|网友|观众",
    r"[\u4e00-\u9fff]{1,3}(?:女士|先生|律师|老师|阿姨|大姐|大哥)",
    r"[A-D]|[甲乙丙丁]",
)


def tag_pattern(tags: Sequence[str] = DEFAULT_SPEAKER_TAGS) -> re.Pattern[str]:
    """One pattern accepting a whole speaker tag of ``tags`` (each a regular expression)."""
    if not tags:
        raise ValueError("corpus.speaker_tags: at least one pattern is needed")
    for t in tags:
        try:
            re.compile(t)
        except re.error as exc:
            msg = f"corpus.speaker_tags: {t!r} is not a regular expression: {exc}"
            raise ValueError(msg) from None
    return re.compile("|".join(f"(?:{t})" for t in tags))


class CorpusSplit(Section):
    """Train/test split of the built dataset by a seeded stable hash of each dialogue id."""

    test_fraction: float = Field(
        0.2, gt=0, lt=1, description="share of dialogues in the test set (the paper: 8:2)"
    )
    seed: int = Field(0, description="changes which dialogues land in the test set")


class CorpusAssign(Section):
    """Who reviews which dialogue (``corpus.assign``, docs/building-a-dataset.md)."""

    stage1: tuple[Name, ...] = Field((), description="annotators of stage 1")
    stage2: tuple[Name, ...] = Field((), description="annotators of stage 2")
    overlap: float = Field(
        0.2, ge=0, le=1, description="share of dialogues given to two annotators (agreement)"
    )
    seed: int = Field(0, description="changes who gets which dialogue")


class CorpusAdjudication(Section):
    """How disagreeing reviews of one dialogue become one record."""

    adjudicators: tuple[Name, ...] = Field(
        (),
        description="reviewers under review_dir whose files decide disagreements field by "
        "field (they do not count as annotators in the agreement table)",
    )
    rule: Literal["priority", "majority"] = Field(
        "priority",
        description="without an adjudication: 'priority' takes the first reviewer in "
        "corpus.final / corpus.reviewers order; 'majority' the value most reviewers gave "
        "(ties: priority)",
    )


class CorpusSettings(Section):
    """From speaker-diarised transcripts to a LeCoDe dataset (target ``dataset``; docs/
    building-a-dataset.md): role identification, stage-1 and stage-2 pre-annotation, human
    review, adjudication, agreement report, train/test split."""

    transcripts: str = Field(
        "data/transcripts", min_length=1, description="directory of transcript files"
    )
    speaker_tags: tuple[str, ...] = Field(
        DEFAULT_SPEAKER_TAGS,
        description="regular expressions of the speaker tags of .txt/.srt/.vtt transcripts; "
        "a tag-like line start that none accepts stops the build",
    )
    n_shards: int = Field(2, ge=1, le=4096, description="annotation jobs (by file-name hash)")
    annotator: Name | None = Field(
        None,
        description="LLM model entry that pre-annotates (Qwen-max in the paper); null: the "
        "built-in offline rules",
    )
    role_confidence: float = Field(
        0.5,
        ge=0,
        le=1,
        description="role identification below this confidence is flagged for review "
        "(roles.csv) before stage 1",
    )
    review_dir: str = Field(
        "data/review", description="reviewed files: <review_dir>/<reviewer>/<id>.stage{1,2}.csv"
    )
    reviewers: tuple[Name, ...] | None = Field(
        None,
        description="annotators whose reviewed files are imported; null: every directory of "
        "review_dir (an explicit list that leaves one out stops the build naming it)",
    )
    final: Name | None = Field(
        None,
        description="whose review wins a disagreement nobody adjudicated (rule 'priority'; "
        "default: the first reviewer); a dialogue nobody reviewed keeps its pre-annotation",
    )
    assign: CorpusAssign = CorpusAssign()
    adjudication: CorpusAdjudication = CorpusAdjudication()
    split: CorpusSplit = CorpusSplit()
    out_dir: str = Field("data/built", description="where the dataset files are published")
    labelstudio_project: Name = Field(
        "lecode",
        description="marks this dataset's Label Studio tasks; an export whose tasks carry "
        "another mark is refused",
    )
    review_export: str = Field(
        "results/corpus/review/current",
        description="stable path of the current review export (a copy of the digest-named one)",
    )

    @field_validator("speaker_tags")
    @classmethod
    def _tags_compile(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        tag_pattern(v)
        return v

    @model_validator(mode="after")
    def _final_is_a_reviewer(self) -> CorpusSettings:
        if self.reviewers is not None:
            if self.final is not None and self.final not in self.reviewers:
                raise ValueError(f"corpus.final: {self.final!r} is not one of corpus.reviewers")
            if len(set(self.reviewers)) != len(self.reviewers):
                raise ValueError("corpus.reviewers: a reviewer is listed twice")
        return self
