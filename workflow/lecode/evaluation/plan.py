"""The evaluation core's jobs: shards, simulation, matching, judging, scoring and the gathered
scores, their specs and paths, derived once from the settings (:class:`EvaluationPlan`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TypeVar

from lecode import paths
from lecode.config.experiment import Settings
from lecode.config.roles import System
from lecode.evaluation.specs import (
    AggregateSpec,
    EvaluateSpec,
    JudgeSpec,
    MatchSpec,
    ScoredRow,
    ScoreSpec,
    ShardSpec,
    SimulateSpec,
    SystemFiles,
)
from lecode.fingerprint import step_code
from lecode.metrics.registry import not_computed
from lecode.plan.hashes import template_hashes
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles
from lecode.shards import shard_name
from lecode.specs import FileRef

E = TypeVar("E", bound=EvaluateSpec)


class EvaluationPlan:
    """Specs, paths and jobs of the evaluation core."""

    def __init__(self, settings: Settings, roles: Roles) -> None:
        self.settings = settings
        self.roles = roles
        self.shards = [shard_name(k) for k in range(settings.dataset.n_shards)]
        #: every table row, in configuration order (those :meth:`not_run` included)
        self.table_systems: list[System] = settings.systems()
        #: the rows this configuration runs
        self.systems: list[System] = [
            x for x in self.table_systems if self.not_run(x.expert) is None
        ]

    def not_run(self, expert: str) -> str | None:
        """Why the rows of model entry ``expert`` are not run (:meth:`Roles.not_run`)."""
        return self.roles.not_run(expert)

    # -- specs ---------------------------------------------------------------------------------

    @cached_property
    def shard_spec(self) -> ShardSpec:
        d = self.settings.dataset
        return ShardSpec(
            test=FileRef.of(d.test),
            n_shards=d.n_shards,
            limit=d.limit,
            code=step_code(ShardSpec.step),
        )

    @cached_property
    def shardset(self) -> str:
        return self.shard_spec.digest()

    @cached_property
    def _simulate(self) -> dict[tuple[str, str], SimulateSpec]:
        s = self.settings
        client = self.roles.role(s.client.model)
        train = None
        out = {}
        for e in s.experts:
            if self.not_run(e.model) is not None:
                continue
            expert = self.roles.role(e.model)
            if getattr(expert.entry, "agent", None) == "retrieval":
                train = train or FileRef.of(s.dataset.train)
            out[(e.model, e.strategy)] = SimulateSpec(
                expert=expert,
                strategy=e.strategy,
                client=client,
                client_strategy=s.client.strategy,
                max_turns=s.simulation.max_turns,
                train=train if getattr(expert.entry, "agent", None) == "retrieval" else None,
                templates={
                    **template_hashes("expert", e.strategy, expert.entry),
                    **template_hashes("client", s.client.strategy, client.entry),
                },
                fail_on_error=s.simulation.fail_on_error,
                code=step_code(SimulateSpec.step),
                runtime=self.roles.runtime(e.model, s.client.model),
            )
        return out

    def simulate_spec(self, expert: str, strategy: str) -> SimulateSpec:
        try:
            return self._simulate[(expert, strategy)]
        except KeyError:
            raise KeyError(f"{expert}/{strategy} is not a configured expert") from None

    def sim(self, expert: str, strategy: str) -> str:
        return self.sim_digests[(expert, strategy)]

    @cached_property
    def sim_digests(self) -> dict[tuple[str, str], str]:
        return {k: v.digest() for k, v in self._simulate.items()}

    def evaluate_spec(self, cls: type[E], kind: str, name: str) -> E:
        """The spec of the matcher or judge (``kind``) played by model entry ``name``."""
        role = self.roles.role(name)
        return cls(
            role=role,
            templates=template_hashes(kind, "default", role.entry),
            code=step_code(cls.step),
            runtime=self.roles.runtime(name),
        )

    @cached_property
    def match_spec(self) -> MatchSpec:
        return self.evaluate_spec(MatchSpec, "matcher", self.settings.matcher.model)

    @cached_property
    def judge_spec(self) -> JudgeSpec | None:
        if self.settings.judge is None:
            return None
        return self.evaluate_spec(JudgeSpec, "judge", self.settings.judge.model)

    @cached_property
    def mcfg(self) -> str:
        return self.match_spec.digest()

    @cached_property
    def jcfg(self) -> str | None:
        return self.judge_spec.digest() if self.judge_spec else None

    @cached_property
    def score_spec(self) -> ScoreSpec:
        m = self.settings.metrics
        return ScoreSpec(
            matcher=self.mcfg,
            judge=self.jcfg,
            rouge=m.rouge,
            bertscore=m.bertscore,
            code=step_code(ScoreSpec.step),
        )

    @cached_property
    def scfg(self) -> str:
        return self.score_spec.digest()

    # -- paths ---------------------------------------------------------------------------------

    def shard_files(self) -> list[str]:
        return [paths.format(paths.SHARD, shardset=self.shardset, shard=k) for k in self.shards]

    @property
    def index_file(self) -> str:
        return paths.format(paths.INDEX, shardset=self.shardset)

    def transcript(self, expert: str, strategy: str, shard: str) -> str:
        return paths.format(
            paths.TRANSCRIPT,
            expert=expert,
            strategy=strategy,
            sim=self.sim(expert, strategy),
            shardset=self.shardset,
            shard=shard,
        )

    def match(self, expert: str, strategy: str, shard: str) -> str:
        return paths.format(
            paths.MATCH,
            expert=expert,
            strategy=strategy,
            sim=self.sim(expert, strategy),
            mcfg=self.mcfg,
            shardset=self.shardset,
            shard=shard,
        )

    def judgement(self, expert: str, strategy: str, shard: str) -> str:
        assert self.jcfg is not None
        return paths.format(
            paths.JUDGEMENT,
            expert=expert,
            strategy=strategy,
            sim=self.sim(expert, strategy),
            jcfg=self.jcfg,
            shardset=self.shardset,
            shard=shard,
        )

    def score(self, expert: str, strategy: str) -> str:
        return paths.format(
            paths.SCORE,
            expert=expert,
            strategy=strategy,
            sim=self.sim(expert, strategy),
            scfg=self.scfg,
            shardset=self.shardset,
        )

    def journal(self, expert: str, strategy: str) -> str:
        return paths.format(
            paths.JOURNAL, expert=expert, strategy=strategy, sim=self.sim(expert, strategy)
        )

    @cached_property
    def system_files(self) -> tuple[SystemFiles, ...]:
        out = []
        for x in self.table_systems:
            e, s = x.expert, x.strategy
            reason = self.not_run(e)
            if reason is not None:
                out.append(
                    SystemFiles(
                        system=x,
                        simulate="",
                        match=self.mcfg,
                        judge=self.jcfg,
                        score=self.scfg,
                        score_file="",
                        transcripts=(),
                        matches=(),
                        judgements=(),
                        not_run=reason,
                    )
                )
                continue
            out.append(
                SystemFiles(
                    system=x,
                    simulate=self.sim(e, s),
                    match=self.mcfg,
                    judge=self.jcfg,
                    score=self.scfg,
                    score_file=self.score(e, s),
                    transcripts=tuple(self.transcript(e, s, k) for k in self.shards),
                    matches=tuple(self.match(e, s, k) for k in self.shards),
                    judgements=tuple(self.judgement(e, s, k) for k in self.shards)
                    if self.jcfg
                    else (),
                )
            )
        return tuple(out)

    @property
    def run_system_files(self) -> tuple[SystemFiles, ...]:
        """The rows this configuration runs (rows :meth:`not_run` are shown as not run)."""
        return tuple(x for x in self.system_files if x.not_run is None)

    def all_transcripts(self) -> list[str]:
        return [t for x in self.system_files for t in x.transcripts]

    @cached_property
    def aggregate_spec(self) -> AggregateSpec:
        return AggregateSpec(
            index=self.index_file,
            rows=tuple(
                ScoredRow(
                    expert=x.system.expert, strategy=x.system.strategy, score_file=x.score_file
                )
                for x in self.run_system_files
            ),
            code=step_code(AggregateSpec.step),
        )

    @cached_property
    def aggregate_file(self) -> str:
        return paths.format(paths.AGGREGATE, agg=self.aggregate_spec.digest())

    def tables_not_applicable(self) -> tuple[str, ...]:
        """Score columns this run does not compute (no judge, BERTScore off): shown as "—"."""
        s = self.settings
        return not_computed(judge=s.judge is not None, bertscore=s.metrics.bertscore.enabled)

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        shardset = self.shardset
        yield Job(self.shard_spec, self.index_file, {"test": self.shard_spec.test.path})
        for x in self.systems:
            e, st = x.expert, x.strategy
            sim = self.simulate_spec(e, st)
            common = {"expert": e, "strategy": st, "sim": self.sim(e, st), "shardset": shardset}
            sim_inputs: dict[str, str | tuple[str, ...]] = {}
            if sim.train is not None:
                sim_inputs["train"] = sim.train.path
            sim_inputs |= self.roles.adapter_files(sim.expert.name, sim.client.name)
            match = self.roles.adapter_files(self.match_spec.role.name)
            judge = self.roles.adapter_files(self.judge_spec.role.name) if self.judge_spec else {}
            for k in self.shards:
                shard = paths.format(paths.SHARD, shardset=shardset, shard=k)
                at, label = {**common, "shard": k}, f"{e}/{st} {k}"
                transcript = self.transcript(e, st, k)
                yield Job(sim, transcript, {"shard": shard, **sim_inputs}, at, label)
                read = {"shard": shard, "transcripts": transcript}
                yield Job(
                    self.match_spec,
                    self.match(e, st, k),
                    {**read, **match},
                    {**at, "mcfg": self.mcfg},
                    label,
                )
                if self.judge_spec is not None:
                    assert self.jcfg is not None
                    yield Job(
                        self.judge_spec,
                        self.judgement(e, st, k),
                        {**read, **judge},
                        {**at, "jcfg": self.jcfg},
                        label,
                    )
            yield Job(
                self.score_spec,
                self.score(e, st),
                {
                    "shards": tuple(self.shard_files()),
                    "transcripts": tuple(self.transcript(e, st, k) for k in self.shards),
                    "matches": tuple(self.match(e, st, k) for k in self.shards),
                    "judgements": tuple(self.judgement(e, st, k) for k in self.shards)
                    if self.jcfg
                    else (),
                },
                {**common, "scfg": self.scfg},
                f"{e}/{st}",
            )
        scores = tuple(x.score_file for x in self.run_system_files)
        yield Job(
            self.aggregate_spec, self.aggregate_file, {"index": self.index_file, "scores": scores}
        )
