"""Measured noise (``replicates:``): each replicated system rerun per varied factor on a fixed
subset of test cases, and the noise report built from the runs."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

from lecode import paths
from lecode.config.experiment import Settings
from lecode.config.roles import System
from lecode.fingerprint import step_code
from lecode.noise.specs import NoiseSpec, ReplicateRun, ReplicateSpec
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles
from lecode.specs import FileRef

if TYPE_CHECKING:
    from lecode.evaluation.plan import EvaluationPlan


class NoisePlan:
    """Specs, paths and jobs of the noise study (none unless ``replicates.enabled``): it
    replicates the evaluation's systems with their simulate, match, judge and score specs."""

    def __init__(self, settings: Settings, roles: Roles, evaluation: EvaluationPlan) -> None:
        self.settings = settings
        self.roles = roles
        self.evaluation = evaluation
        self.systems: list[System] = evaluation.systems

    @property
    def replicates_enabled(self) -> bool:
        return self.settings.replicates.enabled

    def replicated_systems(self) -> list[System]:
        chosen = set(self.settings.replicates.experts)
        return [x for x in self.systems if not chosen or x.expert in chosen]

    def replicate_factors(self) -> tuple[str, ...]:
        """The varied factors (judge only when a judge is configured)."""
        vary = self.settings.replicates.vary
        return tuple(f for f in vary if f != "judge" or self.settings.judge is not None)

    @cached_property
    def replicate_cases(self) -> tuple[str, ...]:
        """The fixed subset: the first ``replicates.cases`` test cases in id-hash order (within
        ``dataset.limit``)."""
        from lecode.dataset import load_cases
        from lecode.shards import select

        d = self.settings.dataset
        cases = select(load_cases(d.test), d.limit)
        return tuple(sorted(c.id for c in select(cases, self.settings.replicates.cases)))

    @cached_property
    def _replicates(self) -> dict[tuple[str, str, str, int], ReplicateSpec]:
        s = self.settings
        n = s.replicates.n
        runs = [("base", 0)] + [(f, r) for f in self.replicate_factors() for r in range(1, n)]
        test = FileRef.of(s.dataset.test)
        names = [s.client.model, s.matcher.model] + ([s.judge.model] if s.judge else [])
        out = {}
        for x in self.replicated_systems():
            base = self.evaluation.simulate_spec(x.expert, x.strategy)
            for factor, r in runs:
                sim = base.model_copy(
                    update={
                        "replicate": r if factor == "expert" else 0,
                        "client_replicate": r if factor == "client" else 0,
                    }
                )
                out[(x.expert, x.strategy, factor, r)] = ReplicateSpec(
                    factor=factor,
                    index=r,
                    simulate=sim,
                    match=self.evaluation.match_spec,
                    judge=self.evaluation.judge_spec,
                    judge_replicate=r if factor == "judge" else 0,
                    score=self.evaluation.score_spec,
                    test=test,
                    cases=self.replicate_cases,
                    code=step_code(ReplicateSpec.step),
                    runtime=self.roles.runtime(x.expert, *names),
                )
        return out

    def replicate_specs(self) -> list[ReplicateSpec]:
        return list(self._replicates.values())

    def replicate_dir(self, spec: ReplicateSpec) -> str:
        return paths.format(
            paths.REPLICATE,
            expert=spec.simulate.expert.name,
            strategy=spec.simulate.strategy,
            sim=spec.simulate.digest(),
            repcfg=spec.digest(),
        )

    def replicate_dirs(self) -> list[str]:
        return [self.replicate_dir(sp) for sp in self._replicates.values()]

    @cached_property
    def noise_spec(self) -> NoiseSpec:
        r = self.settings.replicates
        runs = tuple(
            ReplicateRun(
                expert=e,
                strategy=st,
                factor=f,
                index=k,
                digest=sp.digest(),
                dir=self.replicate_dir(sp),
            )
            for (e, st, f, k), sp in self._replicates.items()
        )
        b = self.settings.metrics.bertscore
        return NoiseSpec(
            runs=runs,
            index=self.evaluation.index_file,
            test=FileRef.of(self.settings.dataset.test),
            bertscore=b if b.enabled else None,
            vary=self.replicate_factors(),
            alpha=r.alpha,
            power=r.power,
            not_applicable=self.evaluation.tables_not_applicable(),
            code=step_code(NoiseSpec.step),
        )

    @cached_property
    def noise_dir(self) -> str:
        return paths.format(paths.NOISE, ncfg=self.noise_spec.digest())

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        if not self.replicates_enabled:
            return
        for spec in self._replicates.values():
            sim = spec.simulate
            inputs: dict[str, str | tuple[str, ...]] = {"test": spec.test.path}
            if sim.train is not None:
                inputs["train"] = sim.train.path
            names = [sim.expert.name, sim.client.name, spec.match.role.name]
            if spec.judge is not None:
                names.append(spec.judge.role.name)
            at = {
                "expert": sim.expert.name,
                "strategy": sim.strategy,
                "sim": sim.digest(),
                "repcfg": spec.digest(),
            }
            yield Job(
                spec,
                self.replicate_dir(spec),
                {**inputs, **self.roles.adapter_files(*names)},
                at,
                f"{sim.expert.name}/{sim.strategy} {spec.factor} {spec.index}",
            )
        yield Job(
            self.noise_spec,
            self.noise_dir,
            {"index": self.evaluation.index_file, "runs": tuple(self.replicate_dirs())},
        )
