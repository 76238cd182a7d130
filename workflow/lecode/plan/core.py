"""The core experiment's jobs: shards, simulation, matching, judging, scoring and the reports,
their specs and paths, derived once from the settings (:class:`CorePlan`)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TypeVar

from lecode import paths
from lecode.config.experiment import Settings
from lecode.config.models import ModelEntry, VLLMEntry
from lecode.config.roles import System
from lecode.fingerprint import digest_files, step_code
from lecode.metrics.registry import not_computed
from lecode.shards import shard_name
from lecode.specs import (
    AggregateSpec,
    EvaluateSpec,
    FiguresSpec,
    FileRef,
    HtmlSpec,
    JudgeSpec,
    LLMRuntimeSpec,
    MatchSpec,
    ReportSpec,
    Role,
    ScoredRow,
    ScoreSpec,
    ShardSpec,
    SimulateSpec,
    SystemFiles,
    TablesSpec,
)

PAPER_NUMBERS = "data/paper_numbers.csv"
E = TypeVar("E", bound=EvaluateSpec)


def prompt_hashes(names: tuple[str, ...]) -> dict[str, str]:
    """``{file name: digest}`` of named prompt templates (``sft/reask`` and the like)."""
    from lecode.llm.templates import PROMPTS_DIR

    base = PROMPTS_DIR.resolve()
    return {f"{n}.txt": digest_files([base / f"{n}.txt"], base) for n in names}


def template_hashes(role: str, strategy: str, entry: ModelEntry) -> dict[str, str]:
    """``{file name: digest}`` of the prompt templates ``role`` reads with ``strategy``; for an
    expert or client strategy also its declaration's code digest
    (:func:`lecode.strategies.identity`)."""
    if not entry.is_llm:
        return {}
    from lecode import strategies

    if role in strategies.ROLES:
        return strategies.identity(role, strategy)
    from lecode.strategies.templates import template_paths

    files = template_paths(role, strategy)
    return {f"{role}/{p.name}": digest_files([p], p.parent) for p in files}


class CorePlan:
    """Specs and paths of the core experiment; the other studies' parts of :class:`Plan` add
    theirs (they find each other through ``self``)."""

    def __init__(self, settings: Settings, paper: str | Path = PAPER_NUMBERS) -> None:
        self.settings = settings
        self.paper = str(paper)
        self.shards = [shard_name(k) for k in range(settings.dataset.n_shards)]
        #: what the adapter identities could not establish (the Snakefile prints these)
        self.warnings: list[str] = []
        self._adapter_ids: dict[str, str | None] = {}
        #: every table row, in configuration order (those :meth:`not_run` included)
        self.table_systems: list[System] = settings.systems()
        #: the rows this configuration runs
        self.systems: list[System] = [
            x for x in self.table_systems if self.not_run(x.expert) is None
        ]

    # -- roles -------------------------------------------------------------------------------

    def role(self, name: str) -> Role:
        return Role(
            name=name, entry=self.settings.models[name], adapter=self.adapter_identity(name)
        )

    def runtime(self, *names: str) -> LLMRuntimeSpec:
        """Model entries the job may need: its roles and the vLLM servers of LoRA entries."""
        models = self.settings.models
        needed = [n for n in names if models[n].is_llm]
        for n in list(needed):
            entry = models[n]
            if isinstance(entry, VLLMEntry) and entry.server:
                needed.append(entry.server)
        adapters = {n: self.adapter_identity(n) for n in needed}
        return LLMRuntimeSpec(
            llm=self.settings.llm,
            models={n: self.served_entry(n) for n in dict.fromkeys(needed)},
            max_turns=self.settings.simulation.max_turns,
            adapters={n: a for n, a in adapters.items() if a is not None},
        )

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
        client = self.role(s.client.model)
        train = None
        out = {}
        for e in s.experts:
            if self.not_run(e.model) is not None:
                continue
            expert = self.role(e.model)
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
                runtime=self.runtime(e.model, s.client.model),
            )
        return out

    def simulate_spec(self, expert: str, strategy: str) -> SimulateSpec:
        try:
            return self._simulate[(expert, strategy)]
        except KeyError:
            raise KeyError(f"{expert}/{strategy} is not a configured expert") from None

    def sim(self, expert: str, strategy: str) -> str:
        return self._sim_digests[(expert, strategy)]

    @cached_property
    def _sim_digests(self) -> dict[tuple[str, str], str]:
        return {k: v.digest() for k, v in self._simulate.items()}

    def evaluate_spec(self, cls: type[E], kind: str, name: str) -> E:
        """The spec of the matcher or judge (``kind``) played by model entry ``name``."""
        role = self.role(name)
        return cls(
            role=role,
            templates=template_hashes(kind, "default", role.entry),
            code=step_code(cls.step),
            runtime=self.runtime(name),
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

    def _report(self, cls: type[ReportSpec], tables: str | None = None) -> ReportSpec:
        s = self.settings
        names = {"client": s.client.model, "matcher": s.matcher.model}
        if s.judge is not None:
            names["judge"] = s.judge.model
        roles = {k: self.role(v) for k, v in names.items()}
        roles.update({f"expert:{x.expert}": self.role(x.expert) for x in self.table_systems})
        return cls(
            aggregate=self.aggregate_file,
            index=self.index_file,
            train=FileRef.of(s.dataset.train),
            test=FileRef.of(s.dataset.test),
            paper=FileRef.of(self.paper),
            systems=self.system_files,
            roles=roles,
            settings=s.report,
            not_applicable=self.tables_not_applicable(),
            tables=tables,
            code=step_code(cls.step),
        )

    @cached_property
    def tables_spec(self) -> TablesSpec:
        spec = self._report(TablesSpec)
        return spec.model_copy(update={"extra_tables": self.extra_table_dirs()})  # type: ignore[return-value]

    @cached_property
    def tables_dir(self) -> str:
        return paths.format(paths.TABLES, tcfg=self.tables_spec.digest())

    @cached_property
    def figures_spec(self) -> FiguresSpec:
        return self._report(FiguresSpec)  # type: ignore[return-value]

    @cached_property
    def html_spec(self) -> HtmlSpec:
        return self._report(HtmlSpec, tables=self.tables_dir)  # type: ignore[return-value]

    def extra_table_dirs(self) -> tuple[str, ...]:
        """Tables built outside the tables job that it copies in: Table 4, the noise report and
        the judge-drift sentinel, each when enabled."""
        out = []
        if self.reliability_enabled:
            out.append(self.table4_dir)
        if self.replicates_enabled:
            out.append(self.noise_dir)
        if self.sentinel_enabled:
            out.append(self.sentinel_dir)
        if self.settings.corpus.reviewers:  # the annotation agreement of the dataset build
            from lecode.corpus.plan import CorpusPlan

            out.append(CorpusPlan(self.settings).agreement_dir)
        return tuple(out)

    def tables_not_applicable(self) -> tuple[str, ...]:
        """Score columns this run does not compute (no judge, BERTScore off): shown as "—"."""
        s = self.settings
        return not_computed(judge=s.judge is not None, bertscore=s.metrics.bertscore.enabled)
