"""The experiment's jobs: every step's spec and every path, derived once from the settings.

The Snakefile builds one :class:`Plan` and asks it for paths and specs; the library asks the
same object, so what the DAG schedules and what provenance records cannot disagree.
"""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path

from lecode import paths
from lecode.fingerprint import digest_files, step_code
from lecode.settings import (
    ModelEntry,
    ReliabilityClient,
    Settings,
    SettingsError,
    System,
    VLLMEntry,
)
from lecode.shards import shard_name
from lecode.specs import (
    AggregateSpec,
    FiguresSpec,
    FileRef,
    HtmlSpec,
    JudgeSpec,
    LLMRuntimeSpec,
    MatchSpec,
    NoiseSpec,
    ReliabilityRun,
    ReliabilitySampleSpec,
    ReliabilitySpec,
    ReplicateRun,
    ReplicateSpec,
    ReportSpec,
    Role,
    ScoreSpec,
    SentinelSpec,
    SFTDataSpec,
    SFTTrainSpec,
    ShardSpec,
    SimulateSpec,
    SystemFiles,
    Table4Spec,
    TablesSpec,
    stable_hash,
)

PAPER_NUMBERS = "data/paper_numbers.csv"
#: The judge's score columns of the per-dialogue scores.
JUDGE_FIELDS = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")
#: Templates the SFT samples are rendered with (the zero-shot expert's turn and forced advice).
SFT_EXPERT_TEMPLATES = ("expert/zero_shot", "expert/advise_only")
SFT_WRITER_TEMPLATES = ("sft/keyfact_questions", "sft/keyfact_e_questions", "sft/reask")
#: Templates of the reliability study's question writer and judge (Table 4).
RELIABILITY_WRITER_TEMPLATES = ("reliability/questions", "reliability/questions_reask")
RELIABILITY_JUDGE_TEMPLATES = ("reliability/judge", "reliability/reask")


def _prompt_hashes(names: tuple[str, ...]) -> dict[str, str]:
    from lecode.llm.templates import PROMPTS_DIR

    base = PROMPTS_DIR.resolve()
    return {f"{n}.txt": digest_files([base / f"{n}.txt"], base) for n in names}


def sft_problems(settings: Settings) -> list[str]:
    """What the ``sft:`` section names that the rest of the configuration cannot provide."""
    sft = settings.sft
    out = []
    if len(set(sft.variants)) != len(sft.variants):
        out.append(f"sft.variants: {list(sft.variants)} repeats a variant")
    if sft.writer is not None:
        entry = settings.models.get(sft.writer)
        if entry is None:
            out.append(f"sft.writer: model {sft.writer!r} is not defined under models")
        elif not entry.is_llm:
            out.append(
                f"sft.writer: {sft.writer!r} is an offline agent; name an LLM model entry, or "
                "null for the built-in template writer"
            )
    return out


def tree_sha256(root: str | Path) -> str:
    """sha256 over (path relative to ``root``, bytes) of every file under ``root``, sorted by
    relative path (files are read in blocks: adapters can be large)."""
    root = Path(root)
    files = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())
    h = hashlib.sha256()
    for rel, path in files:
        h.update(rel.encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def template_hashes(role: str, strategy: str, entry: ModelEntry) -> dict[str, str]:
    """``{file name: digest}`` of the prompt templates ``role`` reads with ``strategy``."""
    if not entry.is_llm:
        return {}
    from lecode.llm.templates import template_paths

    files = template_paths(role, strategy)
    return {f"{role}/{p.name}": digest_files([p], p.parent) for p in files}


class Plan:
    """All specs and paths of one configured experiment."""

    def __init__(self, settings: Settings, paper: str | Path = PAPER_NUMBERS) -> None:
        self.settings = settings
        self.paper = str(paper)
        self.shards = [shard_name(k) for k in range(settings.dataset.n_shards)]
        self.systems: list[System] = settings.systems()
        #: what the adapter identities could not establish (the Snakefile prints these)
        self.warnings: list[str] = []
        self._adapter_ids: dict[str, str | None] = {}

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
            models={n: models[n] for n in dict.fromkeys(needed)},
            max_turns=self.settings.simulation.max_turns,
            adapters={n: a for n, a in adapters.items() if a is not None},
        )

    # -- LoRA adapters served by vLLM --------------------------------------------------------

    def adapter_path(self, name: str) -> str | None:
        """The adapter directory entry ``name`` selects: a vLLM entry with ``server:`` whose
        ``model`` is a key of that server's ``lora:`` mapping; else None."""
        entry = self.settings.models.get(name)
        if not isinstance(entry, VLLMEntry) or entry.server is None:
            return None
        server = self.settings.models.get(entry.server)
        if not isinstance(server, VLLMEntry):
            return None
        return server.lora.get(entry.model or name)

    def published_variant(self, path: str) -> str | None:
        """The configured SFT variant whose ``publish_lora`` output ``path`` is (a DAG output),
        or None (also when training is not configured: no base model)."""
        if self.settings.sft.train.base_model is None:
            return None
        try:
            variants = self.sft_variants
            for v in variants:
                if _same_path(path, self.sft_published(v)):
                    return v
        except (SettingsError, KeyError):
            return None
        return None

    def adapter_identity(self, name: str) -> str | None:
        """What names the adapter entry ``name`` serves, decided when the DAG is built:
        ``train:<sft_train digest>`` for an adapter the workflow trains and publishes (known
        before training: data, base model, hyperparameters, training code);
        ``sha256:<hash of its files>`` for another adapter directory; ``path:<dir>`` (with a
        warning) when that directory does not exist. None for entries without an adapter."""
        if name in self._adapter_ids:
            return self._adapter_ids[name]
        path = self.adapter_path(name)
        identity: str | None = None
        if path is not None:
            variant = self.published_variant(path)
            if variant is not None:
                identity = "train:" + self.sft_train_spec(variant).digest()
            elif Path(path).is_dir():
                identity = "sha256:" + tree_sha256(path)
            else:
                identity = "path:" + path
                self.warnings.append(
                    f"models.{name}: its adapter {path} does not exist and no rule of this "
                    "workflow produces it; it is identified by its path until it exists"
                )
        self._adapter_ids[name] = identity
        return identity

    def adapter_inputs(self, *names: str) -> list[str]:
        """The published SFT adapters (``publish_lora`` outputs) that the vLLM servers of the
        entries ``names`` serve: a server takes every ``--lora-modules`` when it starts, so a
        job that may start it waits for all of them. Adapters the DAG does not produce are no
        inputs (they must exist)."""
        models = self.settings.models
        out: list[str] = []
        for n in names:
            entry = models.get(n)
            if not isinstance(entry, VLLMEntry):
                continue
            server = models.get(entry.server or n)
            if not isinstance(server, VLLMEntry):
                continue
            for path in server.lora.values():
                variant = self.published_variant(path)
                if variant is not None:
                    out.append(self.sft_published(variant))
        return sorted(dict.fromkeys(out))

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

    @cached_property
    def match_spec(self) -> MatchSpec:
        name = self.settings.matcher.model
        role = self.role(name)
        return MatchSpec(
            role=role,
            templates=template_hashes("matcher", "default", role.entry),
            code=step_code(MatchSpec.step),
            runtime=self.runtime(name),
        )

    @cached_property
    def judge_spec(self) -> JudgeSpec | None:
        if self.settings.judge is None:
            return None
        name = self.settings.judge.model
        role = self.role(name)
        return JudgeSpec(
            role=role,
            templates=template_hashes("judge", "default", role.entry),
            code=step_code(JudgeSpec.step),
            runtime=self.runtime(name),
        )

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
        for x in self.systems:
            e, s = x.expert, x.strategy
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

    def all_transcripts(self) -> list[str]:
        return [t for x in self.system_files for t in x.transcripts]

    @cached_property
    def aggregate_spec(self) -> AggregateSpec:
        return AggregateSpec(
            index=self.index_file,
            systems=tuple(
                x.model_copy(
                    update={"system": x.system.model_copy(update={"label": "", "group": ""})}
                )
                for x in self.system_files
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
        roles.update({f"expert:{e.model}": self.role(e.model) for e in s.experts})
        not_applicable: list[str] = []
        if s.judge is None:
            not_applicable += list(JUDGE_FIELDS)
        if not s.metrics.bertscore.enabled:
            not_applicable += ["bertscore_f1", "bertscore_truncated"]
        return cls(
            aggregate=self.aggregate_file,
            index=self.index_file,
            train=FileRef.of(s.dataset.train),
            test=FileRef.of(s.dataset.test),
            paper=FileRef.of(self.paper),
            systems=self.system_files,
            roles=roles,
            settings=s.report,
            not_applicable=tuple(not_applicable),
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

    def digest_of_everything(self) -> str:
        """One name for the whole experiment's results (what the published reports show)."""
        return stable_hash([self.tables_spec.digest(), self.html_spec.digest()])

    # -- SFT (paper section 3.5) -----------------------------------------------------------------

    @cached_property
    def _sft_data(self) -> dict[str, SFTDataSpec]:
        s = self.settings
        sft = s.sft
        problems = sft_problems(s)
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            raise SettingsError(f"the sft section is invalid:\n{lines}")
        train = FileRef.of(s.dataset.train)
        max_turns = sft.max_turns or s.simulation.max_turns
        expert = _prompt_hashes(SFT_EXPERT_TEMPLATES)
        out = {}
        for v in sft.variants:
            if v == "direct":
                out[v] = SFTDataSpec(
                    variant=v,
                    train=train,
                    max_turns=max_turns,
                    templates=expert,
                    code=step_code(SFTDataSpec.step),
                )
                continue
            writer = self.role(sft.writer) if sft.writer else None
            matcher = self.role(s.matcher.model)
            templates = dict(expert)
            if writer is not None:
                templates.update(_prompt_hashes(SFT_WRITER_TEMPLATES))
            if matcher.is_llm:
                templates.update(template_hashes("matcher", "default", matcher.entry))
            out[v] = SFTDataSpec(
                variant=v,
                train=train,
                max_turns=max_turns,
                writer=writer,
                matcher=matcher,
                max_leak=sft.max_leak,
                templates=templates,
                code=step_code(SFTDataSpec.step),
                runtime=self.runtime(*(r.name for r in (writer, matcher) if r is not None)),
            )
        return out

    @property
    def sft_variants(self) -> tuple[str, ...]:
        return tuple(self.settings.sft.variants)

    def sft_data_spec(self, variant: str) -> SFTDataSpec:
        try:
            return self._sft_data[variant]
        except KeyError:
            raise KeyError(f"SFT variant {variant!r} is not in sft.variants") from None

    def sft_data_dir(self, variant: str) -> str:
        return paths.format(paths.SFT_DATA_DIR, sftd=self.sft_data_spec(variant).digest())

    def sft_data_file(self, variant: str) -> str:
        return paths.format(paths.SFT_DATA, sftd=self.sft_data_spec(variant).digest())

    def sft_data_files(self) -> list[str]:
        out = []
        for v in self.sft_variants:
            d = self.sft_data_spec(v).digest()
            out += [paths.format(p, sftd=d) for p in (paths.SFT_DATA, paths.SFT_STATS)]
        return out

    def sft_train_spec(self, variant: str) -> SFTTrainSpec:
        hyper = self.settings.sft.train
        if hyper.base_model is None:
            raise SettingsError(
                "sft.train.base_model: training needs the base model's local directory "
                "(e.g. models/Qwen2.5-7B-Instruct; configs/sft.yaml sets it)"
            )
        return SFTTrainSpec(
            variant=variant,
            data=self.sft_data_spec(variant).digest(),
            base_model=hyper.base_model,
            hyper=hyper,
            code=step_code(SFTTrainSpec.step),
        )

    def sft_train_dir(self, variant: str) -> str:
        return paths.format(paths.SFT_TRAIN_DIR, sftt=self.sft_train_spec(variant).digest())

    def sft_published(self, variant: str) -> str:
        return paths.format(
            paths.SFT_PUBLISHED, publish_dir=self.settings.sft.train.publish_dir, variant=variant
        )

    # -- client-simulator reliability (paper appendix C, Table 4) --------------------------------

    @property
    def reliability_enabled(self) -> bool:
        return self.settings.reliability.enabled

    def reliability_clients(self) -> list[ReliabilityClient]:
        """The studied client models: ``reliability.clients``, or the experiment's client."""
        r = self.settings.reliability
        return list(r.clients) or [ReliabilityClient(model=self.settings.client.model)]

    @cached_property
    def reliability_sample_spec(self) -> ReliabilitySampleSpec:
        s = self.settings
        r = s.reliability
        writer = self.role(r.question_writer) if r.question_writer else None
        return ReliabilitySampleSpec(
            train=FileRef.of(s.dataset.train),
            n_cases=r.n_cases,
            seed=r.seed,
            context_rounds=r.context_rounds,
            questions=r.questions,
            writer=writer,
            templates=_prompt_hashes(RELIABILITY_WRITER_TEMPLATES) if writer else {},
            code=step_code(ReliabilitySampleSpec.step),
            runtime=self.runtime(writer.name) if writer else LLMRuntimeSpec(),
        )

    @cached_property
    def reliability_items_file(self) -> str:
        return paths.format(paths.RELIABILITY_ITEMS, rsmp=self.reliability_sample_spec.digest())

    def reliability_runs(self) -> list[tuple[str, str]]:
        """(client model, client strategy) of every answer job, in table order."""
        return [(c.model, st) for c in self.reliability_clients() for st in c.strategies]

    @cached_property
    def _reliability(self) -> dict[tuple[str, str], ReliabilitySpec]:
        r = self.settings.reliability
        judge = self.role(r.judge) if r.judge else None
        judge_templates = _prompt_hashes(RELIABILITY_JUDGE_TEMPLATES) if judge else {}
        sample = self.reliability_sample_spec.digest()
        out = {}
        for model, strategy in self.reliability_runs():
            client = self.role(model)
            out[(model, strategy)] = ReliabilitySpec(
                sample=sample,
                client=client,
                client_strategy=strategy,
                judge=judge,
                templates={
                    **template_hashes("client", strategy, client.entry),
                    **judge_templates,
                },
                code=step_code(ReliabilitySpec.step),
                runtime=self.runtime(*(x.name for x in (client, judge) if x is not None)),
            )
        return out

    def reliability_spec(self, client: str, strategy: str) -> ReliabilitySpec:
        try:
            return self._reliability[(client, strategy)]
        except KeyError:
            raise KeyError(f"{client}/{strategy}: not a client of the reliability study") from None

    def reliability_file(self, client: str, strategy: str) -> str:
        return paths.format(
            paths.RELIABILITY,
            rsmp=self.reliability_sample_spec.digest(),
            rclient=client,
            cstrategy=strategy,
            rcfg=self.reliability_spec(client, strategy).digest(),
        )

    def reliability_files(self) -> list[str]:
        return [self.reliability_file(c, st) for c, st in self.reliability_runs()]

    @cached_property
    def table4_spec(self) -> Table4Spec:
        s = self.settings
        r = s.reliability
        runs = []
        roles: dict[str, Role] = {}
        for c in self.reliability_clients():
            entry = s.models[c.model]
            roles[f"client:{c.model}"] = self.role(c.model)
            for st in c.strategies:
                runs.append(
                    ReliabilityRun(
                        client=c.model,
                        label=c.label or entry.label or c.model,
                        paper_label=c.paper_label or entry.paper_label,
                        strategy=st,
                        digest=self.reliability_spec(c.model, st).digest(),
                        file=self.reliability_file(c.model, st),
                    )
                )
        for key, name in (("judge", r.judge), ("writer", r.question_writer)):
            if name:
                roles[key] = self.role(name)
        return Table4Spec(
            items=self.reliability_items_file,
            sample=self.reliability_sample_spec.digest(),
            runs=tuple(runs),
            roles=roles,
            paper=FileRef.of(self.paper),
            settings=s.report,
            code=step_code(Table4Spec.step),
        )

    @cached_property
    def table4_dir(self) -> str:
        return paths.format(paths.TABLE4, t4cfg=self.table4_spec.digest())

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

    # -- measured noise (replicates) -------------------------------------------------------------

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
            base = self.simulate_spec(x.expert, x.strategy)
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
                    match=self.match_spec,
                    judge=self.judge_spec,
                    judge_replicate=r if factor == "judge" else 0,
                    score=self.score_spec,
                    test=test,
                    cases=self.replicate_cases,
                    code=step_code(ReplicateSpec.step),
                    runtime=self.runtime(x.expert, *names),
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

    @cached_property
    def _replicate_by_path(self) -> dict[tuple[str, str, str, str], ReplicateSpec]:
        return {
            (sp.simulate.expert.name, sp.simulate.strategy, sp.simulate.digest(), sp.digest()): sp
            for sp in self._replicates.values()
        }

    def replicate_spec_at(self, expert: str, strategy: str, sim: str, repcfg: str) -> ReplicateSpec:
        try:
            return self._replicate_by_path[(expert, strategy, sim, repcfg)]
        except KeyError:
            raise KeyError(
                f"{expert}/{strategy}/{sim}/{repcfg} is not a replicate run of this configuration"
            ) from None

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
            index=self.index_file,
            test=FileRef.of(self.settings.dataset.test),
            bertscore=b if b.enabled else None,
            vary=self.replicate_factors(),
            alpha=r.alpha,
            power=r.power,
            not_applicable=self.tables_not_applicable(),
            code=step_code(NoiseSpec.step),
        )

    @cached_property
    def noise_dir(self) -> str:
        return paths.format(paths.NOISE, ncfg=self.noise_spec.digest())

    def tables_not_applicable(self) -> tuple[str, ...]:
        s = self.settings
        out: list[str] = []
        if s.judge is None:
            out += list(JUDGE_FIELDS)
        if not s.metrics.bertscore.enabled:
            out += ["bertscore_f1", "bertscore_truncated"]
        return tuple(out)

    # -- the judge-drift sentinel ----------------------------------------------------------------

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
            stored=FileRef.of(cfg.stored) if Path(cfg.stored).is_file() else None,
            threshold=cfg.threshold,
            tolerance=cfg.tolerance,
            epoch=epoch,
            code=step_code(SentinelSpec.step),
            runtime=js.runtime,
        )

    @cached_property
    def sentinel_dir(self) -> str:
        return paths.format(paths.SENTINEL, sncfg=self.sentinel_spec.digest())
