"""The judge-drift sentinel: the frozen anchors re-judged for each scoring run."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

from lecode import paths
from lecode.config.experiment import Settings
from lecode.fingerprint import step_code
from lecode.plan.jobs import Inputs, Job
from lecode.plan.roles import Roles
from lecode.sentinel.specs import SentinelSpec
from lecode.specs import FileRef, stable_hash

if TYPE_CHECKING:
    from lecode.evaluation.plan import EvaluationPlan


class SentinelPlan:
    """Spec, path and job of the sentinel (none without a judge or when it is off)."""

    def __init__(self, settings: Settings, roles: Roles, evaluation: EvaluationPlan) -> None:
        self.settings = settings
        self.roles = roles
        self.evaluation = evaluation

    @property
    def sentinel_enabled(self) -> bool:
        return self.settings.judge is not None and self.settings.judge_sentinel.enabled

    @cached_property
    def sentinel_spec(self) -> SentinelSpec:
        js = self.evaluation.judge_spec
        assert js is not None
        cfg = self.settings.judge_sentinel
        # each new scoring run (judge, test set or systems) re-judges the anchors
        epoch = stable_hash(
            [js.digest(), self.evaluation.shardset, sorted(self.evaluation.sim_digests.values())]
        )
        return SentinelSpec(
            judge=js.role,
            templates=js.templates,
            anchors=FileRef.of(cfg.anchors),
            stored=FileRef.of(cfg.stored),  # present: lecode.preflight checked it
            threshold=cfg.threshold,
            tolerance=cfg.tolerance,
            epoch=epoch,
            code=step_code(SentinelSpec.step),
            runtime=js.runtime,
        )

    @cached_property
    def sentinel_dir(self) -> str:
        return paths.format(paths.SENTINEL, sncfg=self.sentinel_spec.digest())

    def jobs(self) -> Iterator[Job]:
        if not self.sentinel_enabled:
            return
        spec = self.sentinel_spec
        inputs: Inputs = {"anchors": spec.anchors.path, **self.roles.adapter_files(spec.judge.name)}
        yield Job(spec, self.sentinel_dir, inputs)
