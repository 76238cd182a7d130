"""The ``corpus:`` section of ``params.yaml``: building a dataset from transcripts."""

from __future__ import annotations

from pydantic import Field, model_validator

from lecode.config.base import Name, Section


class CorpusSplit(Section):
    """Train/test split of the built dataset by a seeded stable hash of each dialogue id."""

    test_fraction: float = Field(0.3, gt=0, lt=1, description="share of dialogues in the test set")
    seed: int = Field(0, description="changes which dialogues land in the test set")


class CorpusSettings(Section):
    """From speaker-diarised transcripts to a LeCoDe dataset (target ``dataset``; docs/
    building-a-dataset.md): role identification, stage-1 and stage-2 pre-annotation, human
    review, agreement report, train/test split."""

    transcripts: str = Field(
        "data/transcripts", min_length=1, description="directory of transcript files"
    )
    n_shards: int = Field(2, ge=1, le=4096, description="annotation jobs (by file-name hash)")
    annotator: Name | None = Field(
        None,
        description="LLM model entry that pre-annotates (Qwen-max in the paper); null: the "
        "built-in offline rules",
    )
    review_dir: str = Field(
        "data/review", description="reviewed files: <review_dir>/<reviewer>/<id>.stage{1,2}.csv"
    )
    reviewers: tuple[Name, ...] = Field(
        (), description="annotators whose reviewed files are imported, side by side"
    )
    final: Name | None = Field(
        None,
        description="whose review enters the dataset (default: the first reviewer); a "
        "dialogue nobody reviewed keeps its pre-annotation",
    )
    split: CorpusSplit = CorpusSplit()
    out_dir: str = Field("data/built", description="where the dataset files are published")

    @model_validator(mode="after")
    def _final_is_a_reviewer(self) -> CorpusSettings:
        if self.final is not None and self.final not in self.reviewers:
            raise ValueError(f"corpus.final: {self.final!r} is not one of corpus.reviewers")
        if len(set(self.reviewers)) != len(self.reviewers):
            raise ValueError("corpus.reviewers: a reviewer is listed twice")
        return self

    @property
    def final_reviewer(self) -> str | None:
        return self.final or (self.reviewers[0] if self.reviewers else None)
