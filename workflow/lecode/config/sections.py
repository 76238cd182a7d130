"""The sections of ``params.yaml`` besides models and roles: dataset, simulation, metrics,
report, the LLM layer, SFT, the reliability study, replicates and the judge-drift sentinel."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from lecode.config.base import RUNTIME_ONLY, Name, Section
from lecode.config.roles import ClientStrategy


class DatasetSettings(Section):
    train: str = Field(min_length=1, description="LeCoDe JSONL training consultations")
    test: str = Field(min_length=1, description="LeCoDe JSONL test consultations")
    n_shards: int = Field(ge=1, le=4096)
    limit: int | None = Field(None, ge=1, description="first N test cases by id-hash order")


class SimulationSettings(Section):
    max_turns: int = Field(10, ge=1, le=50, description="clarifying questions before advice")
    fail_on_error: float | None = Field(
        None, ge=0, le=1, description="stop a job when this share of its dialogues failed"
    )


class RougeSettings(Section):
    tokenizer: Literal["jieba"] = "jieba"
    punctuation: Literal["keep", "drop"] = "keep"


class BertScoreSettings(Section):
    model: str
    num_layers: int = Field(ge=1)
    batch_size: int = Field(32, ge=1)
    threads: Annotated[int, RUNTIME_ONLY] = Field(
        2, ge=1, description="CPU threads of the scoring job"
    )
    mem_mb: Annotated[int, RUNTIME_ONLY] = Field(
        3000, ge=256, description="memory the scoring job reserves"
    )
    enabled: bool = True


class MetricsSettings(Section):
    rouge: RougeSettings = RougeSettings()
    bertscore: BertScoreSettings


class BootstrapSettings(Section):
    resamples: int = Field(10000, ge=100)
    seed: int = 0
    confidence: float = Field(0.95, gt=0, lt=1)


class ReportSettings(Section):
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


class RetrySettings(Section):
    base_delay: float = Field(1.0, ge=0)
    rate_limit_delay: float = Field(5.0, ge=0)
    max_delay: float = Field(60.0, ge=0)


class LLMSettings(Section):
    store_dir: str = "store/responses"
    replay: bool = Field(False, description="answer only from the store (LECODE_REPLAY=1)")
    servers_dir: str | None = None
    ledger_dir: str | None = None
    retry: RetrySettings = RetrySettings()

    @property
    def servers_path(self) -> Path:
        """Where the vLLM state files live: ``servers_dir``, else ``servers`` beside the
        store."""
        return Path(self.servers_dir or Path(self.store_dir).parent / "servers")


#: Set to 1 to answer every request from the response store (no network, no server).
REPLAY_ENV = "LECODE_REPLAY"


def replay_forced(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(REPLAY_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class CmdSettings(Section):
    snakemake: str = Field(".venv/bin/snakemake", description="how dvc repro runs Snakemake")


SFTVariant = Literal["direct", "keyfact", "keyfact-e"]
SFT_VARIANTS: tuple[SFTVariant, ...] = ("direct", "keyfact", "keyfact-e")


class SFTTrainSettings(Section):
    """LoRA fine-tuning (TRL + PEFT) of ``base_model`` on each variant's data; the defaults are
    the paper's (appendix D.1.3). Effective batch = per_device_batch_size x
    gradient_accumulation_steps x devices (4 x 4 x 4 = 64)."""

    enabled: Annotated[bool, RUNTIME_ONLY] = Field(
        False,
        description="train and publish the adapters in this run (GPU; the opt-in). Off: the "
        "rows of adapters this workflow would publish are shown as not run",
    )
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
    logging_steps: Annotated[int, RUNTIME_ONLY] = Field(1, ge=1)
    publish_dir: Annotated[str, RUNTIME_ONLY] = Field(
        "results/sft/lora", description="<dir>/<variant>-sft: the adapters vLLM entries serve"
    )


class SFTSettings(Section):
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


class ReliabilityClient(Section):
    """A client model of the Table 4 study, played with each of ``strategies``."""

    model: Name
    strategies: tuple[ClientStrategy, ...] = Field(
        (), description="client strategies played; empty: every declared client strategy"
    )
    label: str | None = Field(None, description="Table 4 row name (default: the model's label)")
    paper_label: str | None = Field(None, description="the paper's Table 4 row to compare with")


class ReliabilitySettings(Section):
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
        "clarifying questions (intent 5), or the questions_file's",
    )
    questions_file: str | None = Field(
        None,
        description="JSONL of hand-written questions, one consultation a line: "
        '{"id": <training case id>, "questions": [<reliability.questions> strings]}; the '
        "study's consultations are the file's (the paper's protocol), n_cases and seed unused",
    )
    clients: tuple[ReliabilityClient, ...] = Field(
        (), description="client models studied; empty: the experiment's client model"
    )
    judge: Name | None = Field(
        None, description="LLM model entry judging relevance and factuality; null: audit only"
    )


ReplicateFactor = Literal["expert", "client", "judge"]


class ReplicateSettings(Section):
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


class SentinelSettings(Section):
    """Judge-drift sentinel: a frozen anchor set re-judged at each scoring run; the run fails
    when agreement with the stored judgements falls below ``threshold``."""

    enabled: bool = Field(True, description="re-judge the anchors whenever a judge is configured")
    anchors: str = "data/anchors/judge_anchors.jsonl"
    stored: str = Field(
        "data/anchors/judge_anchor_scores.json",
        description="stored judgements by served model id: copy the judgements of "
        "results/sentinel/<digest>/judge_sentinel.json under the model id",
    )
    threshold: float = Field(0.8, ge=0, le=1, description="least share of scores that agree")
    tolerance: int = Field(1, ge=0, le=9, description="a score agrees within this many points")
