"""The experiment configuration (``params.yaml``) as typed models, parsed once.

Every section and every model entry forbids unknown keys, so a typo such as ``temprature``
is an error, never a silently ignored setting. Defaults are defined here and nowhere else.
``workflow/schemas/params.schema.json`` is generated from :class:`Settings`
(``lecode schema``) and checked to be current by the tests.

Checks that need only the configuration run when it is parsed (:meth:`Settings.parse`);
checks that need the machine (dataset files, API key variables) run in :func:`check_runnable`,
which the Snakefile calls before it schedules any job.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
EnvName = Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")]

EXPERT_STRATEGIES = ("zero_shot", "zero_shot_json", "few_shot", "mediq", "mediq_threshold")
ExpertStrategy = Literal[
    "baseline", "zero_shot", "zero_shot_json", "few_shot", "mediq", "mediq_threshold"
]
ClientStrategy = Literal["first_person_dialogue", "instruct_dialogue", "instruct_question"]

#: Settings of a model entry that never change its outputs: left out of every job digest.
RUNTIME_ONLY = frozenset(
    {
        "label",
        "group",
        "paper_label",
        "concurrency",
        "timeout",
        "max_retries",
        "price",
        "api_key_env",
    }
)
#: ``dump(context=IDENTITY)`` drops runtime-only settings (the form that enters digests).
IDENTITY = {"identity": True}


class SettingsError(ValueError):
    """The configuration is invalid; the message names each offending setting."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------------------------
# Model entries: a discriminated union on ``backend`` (and on ``agent`` for offline ones).


class _Entry(_Section):
    label: str | None = Field(None, description="display name in tables")
    group: str | None = Field(None, description="table group, e.g. Closed-source LLMs")
    paper_label: str | None = Field(None, description="the paper's row name, if not the label")

    @model_serializer(mode="wrap")
    def _identity(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict) and (info.context or {}).get("identity"):
            return {k: v for k, v in data.items() if k not in RUNTIME_ONLY}
        return data

    @property
    def is_llm(self) -> bool:
        return self.backend != "offline"  # type: ignore[attr-defined]


class HumanReplay(_Entry):
    """Expert baseline: asks the real lawyer's clarifying questions, then the real advice."""

    backend: Literal["offline"]
    agent: Literal["human_replay"]


class Retrieval(_Entry):
    """Expert baseline: questions and advice of the most similar training consultations."""

    backend: Literal["offline"]
    agent: Literal["retrieval"]
    top_k: int = Field(5, ge=1)


class FactLookup(_Entry):
    """Simulated client: answers with the key facts that best match each question."""

    backend: Literal["offline"]
    agent: Literal["fact_lookup"]
    max_facts: int = Field(3, ge=1)


class Lexical(_Entry):
    """Fact matcher: token overlap between a question-answer pair and each fact."""

    backend: Literal["offline"]
    agent: Literal["lexical"]
    threshold: float = Field(0.5, gt=0, le=1)


OfflineEntry = Annotated[
    HumanReplay | Retrieval | FactLookup | Lexical, Field(discriminator="agent")
]
OFFLINE_ROLES: dict[str, str] = {
    "human_replay": "expert",
    "retrieval": "expert",
    "fact_lookup": "client",
    "lexical": "matcher",
}


class Price(_Section):
    """Currency units per 1,000 tokens."""

    prompt: float = Field(0.0, ge=0)
    completion: float = Field(0.0, ge=0)
    cached_prompt: float | None = Field(
        None,
        ge=0,
        description="a prompt token read from the provider's prompt cache (default: prompt)",
    )


class _LLMEntry(_Entry):
    model: str | None = Field(None, description="the served model id sent in requests")
    api_key_env: EnvName | None = Field(None, description="variable that holds the API key")
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    timeout: float = Field(120.0, gt=0, description="seconds per request")
    max_retries: int = Field(6, ge=0, description="retries after the first attempt")
    concurrency: int = Field(4, ge=1, description="requests in flight per endpoint and job")
    price: Price = Price()
    json_mode: bool = Field(False, description="request JSON output for JSON prompts")
    threshold_confidence: float = Field(0.8, ge=0, le=1, description="mediq_threshold")
    unmarked: Literal["reask", "advice", "question"] = Field(
        "reask", description="a reply without 提问/建议 marker: re-ask once, or take it as is"
    )


class OpenAIEntry(_LLMEntry):
    """Any OpenAI-compatible endpoint (OpenAI, DashScope, DeepSeek, llama.cpp server)."""

    backend: Literal["openai"]
    base_url: str
    model: str


class VLLMEntry(_LLMEntry):
    """A local model served by ``vllm serve`` (started by the workflow), or a LoRA adapter
    (``server:`` names the entry whose server serves it)."""

    backend: Literal["vllm"]
    model_path: str | None = None
    server: Name | None = None
    lora: dict[str, str] = Field(default_factory=dict)
    serve_args: tuple[str, ...] = ()
    port: int | None = Field(None, ge=1, le=65535)
    gpu_memory_utilization: float | None = Field(None, gt=0, le=1)

    @model_validator(mode="after")
    def _served(self) -> VLLMEntry:
        if (self.model_path is None) == (self.server is None):
            raise ValueError("a vllm entry needs exactly one of 'model_path' or 'server'")
        return self


LLMEntry = Annotated[OpenAIEntry | VLLMEntry, Field(discriminator="backend")]


ModelEntry = Annotated[OfflineEntry | OpenAIEntry | VLLMEntry, Field(discriminator="backend")]


# ---------------------------------------------------------------------------------------------
# Roles and sections.


class ExpertRole(_Section):
    model: Name
    strategy: ExpertStrategy
    label: str | None = Field(None, description="the table row's name (unique)")
    group: str | None = None
    paper_label: str | None = Field(None, description="the paper's row to compare with")


class ClientRole(_Section):
    model: Name
    strategy: ClientStrategy = "first_person_dialogue"


class EvaluatorRole(_Section):
    """The fact matcher or the judge: a model entry, nothing else."""

    model: Name


class DatasetSettings(_Section):
    train: str = Field(min_length=1, description="LeCoDe JSONL training consultations")
    test: str = Field(min_length=1, description="LeCoDe JSONL test consultations")
    n_shards: int = Field(ge=1, le=4096)
    limit: int | None = Field(None, ge=1, description="first N test cases by id-hash order")


class SimulationSettings(_Section):
    max_turns: int = Field(10, ge=1, le=50, description="clarifying questions before advice")
    fail_on_error: float | None = Field(
        None, ge=0, le=1, description="stop a job when this share of its dialogues failed"
    )


class RougeSettings(_Section):
    tokenizer: Literal["jieba"] = "jieba"
    punctuation: Literal["keep", "drop"] = "keep"


class BertScoreSettings(_Section):
    model: str
    num_layers: int = Field(ge=1)
    batch_size: int = Field(32, ge=1)
    threads: int = Field(2, ge=1, description="CPU threads of the scoring job (runtime only)")
    mem_mb: int = Field(3000, ge=256, description="memory the scoring job reserves")
    enabled: bool = True

    def identity(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"threads", "mem_mb"})


class MetricsSettings(_Section):
    rouge: RougeSettings = RougeSettings()
    bertscore: BertScoreSettings


class BootstrapSettings(_Section):
    resamples: int = Field(10000, ge=100)
    seed: int = 0
    confidence: float = Field(0.95, gt=0, lt=1)


class ReportSettings(_Section):
    coverage_threshold: float = Field(0.9, ge=0, le=1, description="cells below are marked")
    reference: str | None = Field(None, description="label of the row others are compared to")
    bootstrap: BootstrapSettings = BootstrapSettings()
    latex_ci: bool = Field(False, description="print the ± half-width in LaTeX tables too")
    top_marked: int = Field(
        0, ge=0, description="colour each column's top k values blue in LaTeX (the paper: 6)"
    )
    strategy_base: str | None = Field(
        None, description="Figure 7: the expert model whose strategies are compared"
    )


class RetrySettings(_Section):
    base_delay: float = Field(1.0, ge=0)
    rate_limit_delay: float = Field(5.0, ge=0)
    max_delay: float = Field(60.0, ge=0)


class LLMSettings(_Section):
    store_dir: str = "store/responses"
    replay: bool = Field(False, description="answer only from the store (LECODE_REPLAY=1)")
    servers_dir: str | None = None
    ledger_dir: str | None = None
    retry: RetrySettings = RetrySettings()


class CmdSettings(_Section):
    snakemake: str = Field(".venv/bin/snakemake", description="how dvc repro runs Snakemake")


SFTVariant = Literal["direct", "keyfact", "keyfact-e"]
SFT_VARIANTS: tuple[str, ...] = ("direct", "keyfact", "keyfact-e")


class SFTTrainSettings(_Section):
    """LoRA fine-tuning (TRL + PEFT) of ``base_model`` on each variant's data; the defaults are
    the paper's (appendix D.1.3). Effective batch = per_device_batch_size x
    gradient_accumulation_steps x devices (4 x 4 x 4 = 64)."""

    base_model: str | None = Field(
        None, description="local directory of the base model (Qwen2.5-7B-Instruct in the paper)"
    )
    lora_r: int = Field(8, ge=1)
    lora_alpha: int = Field(16, ge=1)
    lora_dropout: float = Field(0.05, ge=0, lt=1, description="not given by the paper")
    target_modules: str | tuple[str, ...] = Field(
        "all-linear", description="PEFT target modules (the paper does not say)"
    )
    per_device_batch_size: int = Field(4, ge=1)
    gradient_accumulation_steps: int = Field(4, ge=1)
    devices: int = Field(4, ge=1, description="GPUs of one training job (torchrun processes)")
    learning_rate: float = Field(1e-5, gt=0)
    lr_scheduler: Literal["cosine", "linear", "constant_with_warmup"] = "cosine"
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    epochs: float = Field(3.0, gt=0)
    max_steps: int | None = Field(None, ge=1, description="stop after N steps (checks only)")
    max_length: int = Field(4096, ge=64, description="tokens per sample; longer ones are cut")
    bf16: bool = Field(True, description="bfloat16 on GPUs (float32 on CPU)")
    seed: int = 0
    logging_steps: int = Field(1, ge=1)
    publish_dir: str = Field(
        "results/sft/lora", description="<dir>/<variant>-sft: the adapters vLLM entries serve"
    )


class SFTSettings(_Section):
    """Training dialogues for SFT (paper section 3.5): ``direct`` from the real dialogues,
    ``keyfact``/``keyfact-e`` from questions a writer composes for the key facts."""

    variants: tuple[SFTVariant, ...] = Field(SFT_VARIANTS, min_length=1)
    writer: Name | None = Field(
        None,
        description="LLM model entry that writes the key-fact questions (Qwen-max in the "
        "paper); null: the built-in offline template writer",
    )
    max_turns: int | None = Field(
        None, ge=1, le=50, description="questions per training dialogue (simulation.max_turns)"
    )
    max_leak: float = Field(
        0.8, gt=0, le=1, description="reject a question that already states this share of its fact"
    )
    train: SFTTrainSettings = SFTTrainSettings()


CLIENT_STRATEGIES: tuple[str, ...] = (
    "instruct_dialogue",
    "instruct_question",
    "first_person_dialogue",
)


class ReliabilityClient(_Section):
    """A client model of the Table 4 study, played with each of ``strategies``."""

    model: Name
    strategies: tuple[ClientStrategy, ...] = Field(CLIENT_STRATEGIES, min_length=1)  # type: ignore[assignment]
    label: str | None = Field(None, description="Table 4 row name (default: the model's label)")
    paper_label: str | None = Field(None, description="the paper's Table 4 row to compare with")


class ReliabilitySettings(_Section):
    """Client-simulator reliability (paper appendix C, Table 4): ``n_cases`` training
    consultations with their first ``context_rounds`` rounds, ``questions`` clarifying
    questions each, answered by every client model x strategy; judged for relevance and
    factuality by ``judge`` (optional) and audited deterministically (:mod:`lecode.audit`)."""

    enabled: bool = Field(False, description="build Table 4 (target table4, part of all)")
    n_cases: int = Field(100, ge=1, description="training consultations sampled (seeded)")
    seed: int = 0
    context_rounds: int = Field(5, ge=0, description="rounds of the real dialogue shown")
    questions: int = Field(3, ge=1, description="clarifying questions per consultation")
    question_writer: Name | None = Field(
        None,
        description="LLM model entry that writes the questions; null: the real lawyer's next "
        "clarifying questions (intent 5)",
    )
    clients: tuple[ReliabilityClient, ...] = Field(
        (), description="client models studied; empty: the experiment's client model"
    )
    judge: Name | None = Field(
        None, description="LLM model entry judging relevance and factuality; null: audit only"
    )


ReplicateFactor = Literal["expert", "client", "judge"]


class ReplicateSettings(_Section):
    """Measured noise: each replicated system runs ``n`` times per varied factor (the base run
    included) on a fixed subset of test cases; see :mod:`lecode.noise`."""

    n: int = Field(1, ge=1, le=50, description="runs per system and factor; 1: no replicates")
    cases: int = Field(20, ge=2, description="the fixed subset: first N test cases (id-hash order)")
    vary: tuple[ReplicateFactor, ...] = Field(
        ("expert", "client", "judge"),
        min_length=1,
        description="whose seeds change between runs, one factor at a time",
    )
    experts: tuple[Name, ...] = Field((), description="expert models replicated; empty: all")
    alpha: float = Field(0.05, gt=0, lt=1, description="two-sided test level of the MDD")
    power: float = Field(0.8, gt=0, lt=1, description="power of the minimum detectable difference")

    @property
    def enabled(self) -> bool:
        return self.n > 1


class SentinelSettings(_Section):
    """Judge-drift sentinel: a frozen anchor set re-judged at each scoring run; the run fails
    when agreement with the stored judgements falls below ``threshold``."""

    enabled: bool = Field(True, description="re-judge the anchors whenever a judge is configured")
    anchors: str = "data/anchors/judge_anchors.jsonl"
    stored: str = Field(
        "data/anchors/judge_anchor_scores.json",
        description="stored judgements by served model id (record with lecode sentinel-record)",
    )
    threshold: float = Field(0.8, ge=0, le=1, description="least share of scores that agree")
    tolerance: int = Field(1, ge=0, le=9, description="a score agrees within this many points")


class System(_Section):
    """One table row: an expert model played with one strategy."""

    expert: str
    strategy: str
    label: str
    group: str
    paper_label: str | None = None


REPLAY_ENV = "LECODE_REPLAY"


def replay_forced(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(REPLAY_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class Settings(_Section):
    """The whole experiment."""

    dataset: DatasetSettings
    models: dict[Name, ModelEntry] = Field(min_length=1)
    experts: tuple[ExpertRole, ...] = Field(min_length=1)
    client: ClientRole
    matcher: EvaluatorRole
    judge: EvaluatorRole | None = None
    simulation: SimulationSettings = SimulationSettings()
    metrics: MetricsSettings
    report: ReportSettings = ReportSettings()
    llm: LLMSettings = LLMSettings()
    cmd: CmdSettings = CmdSettings()
    sft: SFTSettings = SFTSettings()
    reliability: ReliabilitySettings = ReliabilitySettings()
    replicates: ReplicateSettings = ReplicateSettings()
    judge_sentinel: SentinelSettings = SentinelSettings()

    @model_validator(mode="after")
    def _semantics(self) -> Settings:
        problems = list(_semantic_problems(self))
        if problems:
            raise ValueError("\n".join(problems))
        return self

    # -- parsing ---------------------------------------------------------------------------

    @classmethod
    def parse(cls, data: Mapping[str, Any], source: str = "params.yaml") -> Settings:
        """Validate ``data``; every problem is reported with the setting's dotted path."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise SettingsError(format_errors(exc, source, data)) from None

    @classmethod
    def load(cls, path: str | Path = "params.yaml", *extra: str | Path) -> Settings:
        """``path`` with any extra files merged over it, as ``snakemake --configfile`` does."""
        import yaml  # here, not at the top: jobs get their spec as JSON and never read YAML

        merged: dict[str, Any] = {}
        for p in (path, *extra):
            data = yaml.safe_load(Path(p).read_text(encoding="utf-8")) or {}
            if not isinstance(data, dict):
                raise SettingsError(f"{p}: the top level must be a mapping")
            merged = deep_merge(merged, data)
        return cls.parse(merged, source=" + ".join(str(p) for p in (path, *extra)))

    # -- derived ---------------------------------------------------------------------------

    def systems(self) -> list[System]:
        """The table rows in configuration order, with display label and group."""
        out = []
        for e in self.experts:
            m = self.models[e.model]
            default_group = "Baselines (ours)" if not m.is_llm else "LLMs"
            out.append(
                System(
                    expert=e.model,
                    strategy=e.strategy,
                    label=e.label or m.label or f"{e.model}/{e.strategy}",
                    group=e.group or m.group or default_group,
                    paper_label=e.paper_label or m.paper_label,
                )
            )
        return out

    def role_models(self) -> list[str]:
        """Every model name a role uses (experts, client, matcher, judge, and the reliability
        study's when it is enabled), in order, once."""
        names = [e.model for e in self.experts] + [self.client.model, self.matcher.model]
        if self.judge is not None:
            names.append(self.judge.model)
        r = self.reliability
        if r.enabled:
            names += [c.model for c in r.clients] or [self.client.model]
            names += [n for n in (r.question_writer, r.judge) if n is not None]
        return list(dict.fromkeys(names))

    def llm_models(self) -> list[str]:
        return [n for n in self.role_models() if self.models[n].is_llm]

    def replay(self, environ: Mapping[str, str] | None = None) -> bool:
        return self.llm.replay or replay_forced(environ)


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = (
            deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


def format_errors(exc: ValidationError, source: str, data: Any = None) -> str:
    lines = []
    for err in exc.errors()[:30]:
        loc = _setting_path(err["loc"], data)
        where = ".".join(loc) or "<top level>"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting (a typo?)"
        if not loc:  # semantic problems: each names its own setting
            lines.extend(f"  {line}" for line in msg.splitlines())
            continue
        lines.append(f"  {where}: {msg}")
    return f"{source} is invalid:\n" + "\n".join(lines)


def _setting_path(loc: tuple[Any, ...], data: Any) -> list[str]:
    """``loc`` without the union-member tags pydantic inserts (``openai``, ``retrieval``),
    found by walking the input: a tag is a part that is no key of the data at that point."""
    out: list[str] = []
    for part in loc:
        if isinstance(data, dict):
            if part in data:
                data = data[part]
            elif part in (data.get("backend"), data.get("agent")):
                continue
            else:
                data = None
        elif isinstance(data, (list, tuple)) and isinstance(part, int) and part < len(data):
            data = data[part]
            out[-1:] = [f"{out[-1]}[{part}]"] if out else [f"[{part}]"]
            continue
        else:
            data = None
        out.append(str(part))
    return out


def _semantic_problems(s: Settings) -> Iterable[str]:
    """What a schema cannot say: every role names a model that can play it, labels unique."""

    def entry(where: str, name: str) -> Any:
        if name not in s.models:
            raise_ = f"{where}: model {name!r} is not defined under models"
            problems.append(raise_)
            return None
        return s.models[name]

    problems: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(s.experts):
        m = entry(f"experts[{i}].model", e.model)
        key = (e.model, e.strategy)
        if key in seen:
            problems.append(f"experts[{i}]: {e.model}/{e.strategy} repeats experts[{seen[key]}]")
        seen.setdefault(key, i)
        if m is None:
            continue
        if not m.is_llm and OFFLINE_ROLES[m.agent] != "expert":
            problems.append(f"experts[{i}].model: offline agent {m.agent!r} is not an expert")
        elif (not m.is_llm) != (e.strategy == "baseline"):
            problems.append(
                f"experts[{i}].strategy: offline experts play 'baseline' and LLM experts an "
                f"LLM strategy; got {e.strategy!r} for backend {m.backend!r}"
            )
    for role in ("client", "matcher"):
        m = entry(f"{role}.model", getattr(s, role).model)
        if m is not None and not m.is_llm and OFFLINE_ROLES[m.agent] != role:
            problems.append(f"{role}.model: offline agent {m.agent!r} cannot be the {role}")
    if s.judge is not None:
        m = entry("judge.model", s.judge.model)
        if m is not None and not m.is_llm:
            problems.append("judge.model: the judge must be an LLM (no offline judge exists)")
    for name, m in s.models.items():
        if isinstance(m, VLLMEntry) and m.server is not None:
            host = s.models.get(m.server)
            if not isinstance(host, VLLMEntry) or host.model_path is None:
                problems.append(
                    f"models.{name}.server: {m.server!r} is not a vllm entry with a model_path"
                )
    problems.extend(_reliability_problems(s))
    for i, name in enumerate(s.replicates.experts):
        if name not in {e.model for e in s.experts}:
            problems.append(f"replicates.experts[{i}]: {name!r} is not the model of an expert")
    if not problems:
        labels: dict[str, int] = {}
        for i, sys_ in enumerate(s.systems()):
            if sys_.label in labels:
                problems.append(
                    f"experts[{i}]: label {sys_.label!r} is also the label of "
                    f"experts[{labels[sys_.label]}]; every table row needs its own label "
                    "(set experts[].label)"
                )
            labels.setdefault(sys_.label, i)
    return problems


def _reliability_problems(s: Settings) -> Iterable[str]:
    """The reliability section names models that can play its roles."""
    r = s.reliability
    for i, c in enumerate(r.clients):
        m = s.models.get(c.model)
        if m is None:
            yield f"reliability.clients[{i}].model: model {c.model!r} is not defined under models"
        elif not m.is_llm and OFFLINE_ROLES[m.agent] != "client":  # type: ignore[union-attr]
            yield f"reliability.clients[{i}].model: offline agent {m.agent!r} is not a client"  # type: ignore[union-attr]
    models = [c.model for c in r.clients]
    if len(set(models)) != len(models):
        yield f"reliability.clients: {models} names a model twice"
    for key in ("judge", "question_writer"):
        name = getattr(r, key)
        if name is None:
            continue
        m = s.models.get(name)
        if m is None:
            yield f"reliability.{key}: model {name!r} is not defined under models"
        elif not m.is_llm:
            yield f"reliability.{key}: {name!r} is an offline agent; name an LLM model entry"


# ---------------------------------------------------------------------------------------------
# Checks that need the machine, run when the DAG is built (before any job can spend money).


def count_records(path: str | Path) -> int:
    """Non-blank lines of a JSONL file (a cheap count; ``lecode validate`` parses them)."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def check_runnable(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    models: Iterable[str] | None = None,
) -> None:
    """Dataset files readable and non-empty; the API key variable of every model in
    ``models`` (default: every LLM model a role uses) set, unless in replay mode."""
    check_data(settings)
    check_keys(settings, settings.llm_models() if models is None else models, environ)


def check_data(settings: Settings) -> None:
    """The dataset files are readable and hold consultations (naming the setting)."""
    problems: list[str] = []
    for key in ("test", "train"):
        path = getattr(settings.dataset, key)
        try:
            n = count_records(path)
        except OSError as exc:
            problems.append(f"dataset.{key}: cannot read {path}: {exc.strerror or exc}")
            continue
        if n == 0 and (key == "test" or _needs_train(settings)):
            problems.append(f"dataset.{key}: {path} holds no consultations")
    if problems:
        raise SettingsError("the experiment cannot run:\n" + "\n".join(f"  {p}" for p in problems))


def check_keys(
    settings: Settings, models: Iterable[str], environ: Mapping[str, str] | None = None
) -> None:
    """The API key variable of each of ``models`` is set (nothing is needed in replay mode,
    where every response comes from the store)."""
    env = os.environ if environ is None else environ
    if settings.replay(env):
        return
    problems: list[str] = []
    for name in dict.fromkeys(models):
        m = settings.models[name]
        var = getattr(m, "api_key_env", None)
        if m.is_llm and var and not env.get(var):
            problems.append(
                f"models.{name}.api_key_env: environment variable {var} is not set "
                f"(set it, or regenerate from stored responses with {REPLAY_ENV}=1)"
            )
    if problems:
        raise SettingsError("the experiment cannot run:\n" + "\n".join(f"  {p}" for p in problems))


def _needs_train(settings: Settings) -> bool:
    return any(
        getattr(settings.models[e.model], "agent", None) == "retrieval" for e in settings.experts
    )


def json_schema() -> dict[str, Any]:
    """The JSON schema of ``params.yaml``, generated from :class:`Settings`."""
    schema = Settings.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "lecode experiment parameters (params.yaml)"
    return schema


SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "params.schema.json"
