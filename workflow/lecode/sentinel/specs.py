"""The spec of the judge-drift sentinel."""

from __future__ import annotations

from typing import Annotated, ClassVar

from lecode.config.base import RUNTIME_ONLY
from lecode.specs import FileRef, JobSpec, LLMRuntimeSpec, Role


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
