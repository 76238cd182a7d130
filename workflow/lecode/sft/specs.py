"""The specs of the SFT study's steps: each variant's training data and its LoRA training."""

from __future__ import annotations

from typing import Annotated, ClassVar

from lecode.config.base import RUNTIME_ONLY
from lecode.config.sections import SFTSettings, SFTTrainSettings
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec, Role


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
