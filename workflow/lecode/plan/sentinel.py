"""The judge-drift sentinel: the frozen anchors re-judged for each scoring run."""

from __future__ import annotations

from functools import cached_property

from lecode import paths
from lecode.config.experiment import Settings
from lecode.fingerprint import step_code
from lecode.specs import FileRef, SentinelSpec, stable_hash


class SentinelPlan:
    """The sentinel part of :class:`lecode.plan.Plan`."""

    settings: Settings

    @property
    def sentinel_enabled(self) -> bool:
        return self.settings.judge is not None and self.settings.judge_sentinel.enabled

    @cached_property
    def sentinel_spec(self) -> SentinelSpec:
        js = self.judge_spec
        assert js is not None
        cfg = self.settings.judge_sentinel
        # each new scoring run (judge, test set or systems) re-judges the anchors
        epoch = stable_hash([js.digest(), self.shardset, sorted(self._sim_digests.values())])
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
