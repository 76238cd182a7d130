"""Model entries of ``params.yaml`` (``models:``): a discriminated union on ``backend`` (and on
``agent`` for the offline ones). The typed entry travels unchanged from the settings through the
job specs to the LLM endpoint (:meth:`lecode.llm.spec.ModelSpec.of`); its defaults are these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from lecode.config.base import RUNTIME_ONLY, EnvName, Name, Section, SettingsError


class _Entry(Section):
    label: Annotated[str | None, RUNTIME_ONLY] = Field(None, description="display name in tables")
    group: Annotated[str | None, RUNTIME_ONLY] = Field(
        None, description="table group, e.g. Closed-source LLMs"
    )
    paper_label: Annotated[str | None, RUNTIME_ONLY] = Field(
        None, description="the paper's row name, if not the label"
    )

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
#: The role each offline agent can play.
OFFLINE_ROLES: dict[str, str] = {
    "human_replay": "expert",
    "retrieval": "expert",
    "fact_lookup": "client",
    "lexical": "matcher",
}


class Price(Section):
    """Currency units per 1,000 tokens (any currency, used consistently)."""

    prompt: float = Field(0.0, ge=0)
    completion: float = Field(0.0, ge=0)
    cached_prompt: float | None = Field(
        None,
        ge=0,
        description="a prompt token the provider read from its prompt cache (default: prompt)",
    )

    def cost(self, prompt_tokens: int, completion_tokens: int, *, cached_prompt: int = 0) -> float:
        """The cost of a call whose ``prompt_tokens`` include ``cached_prompt`` cached ones."""
        cached_price = self.prompt if self.cached_prompt is None else self.cached_prompt
        cached = min(cached_prompt, prompt_tokens)
        return (
            (prompt_tokens - cached) * self.prompt
            + cached * cached_price
            + completion_tokens * self.completion
        ) / 1000.0


MarkerReading = Literal["strict", "preamble", "anywhere"]
TwoMoves = Literal["reask", "first", "question", "advice"]


class Markers(Section):
    """How an expert's marked replies are read (:func:`lecode.llm.parsing.read_marked_reply`).

    ``reading``: ``strict``, the marker first in the reply; ``preamble`` (default), first or
    after a short preamble (``好的，我了解了。``) of at most 60 characters; ``anywhere``, the
    first marker anywhere in the reply (the paper's substring reading). ``two_moves``, a reply
    holding both a question and advice outside a call that fixes the kind: ``reask`` (default)
    re-asks once, ``first`` takes the kind whose marker comes first, ``question`` / ``advice``
    take that part. Where the call fixes the kind (forced advice, MediQ's ask and advise
    calls) that kind's part is taken, except under ``strict``.
    """

    reading: MarkerReading = "preamble"
    two_moves: TwoMoves = "reask"


class _LLMEntry(_Entry):
    model: str | None = Field(None, description="the served model id sent in requests")
    api_key_env: Annotated[EnvName | None, RUNTIME_ONLY] = Field(
        None, description="variable that holds the API key"
    )
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    timeout: Annotated[float, RUNTIME_ONLY] = Field(120.0, gt=0, description="seconds per request")
    max_retries: Annotated[int, RUNTIME_ONLY] = Field(
        6, ge=0, description="retries after the first attempt"
    )
    concurrency: Annotated[int, RUNTIME_ONLY] = Field(
        4, ge=1, description="requests in flight per endpoint and job"
    )
    price: Annotated[Price, RUNTIME_ONLY] = Price()
    json_mode: bool = Field(False, description="request JSON output for JSON prompts")
    threshold_confidence: float = Field(
        0.8, ge=0, le=1, description="confidence threshold of the mediq_threshold strategy"
    )
    unmarked: Literal["reask", "advice", "question"] = Field(
        "reask", description="a reply without 提问/建议 marker: re-ask once, or take it as is"
    )
    markers: Markers = Field(
        Markers(),
        description="where an expert reply's 提问/建议 marker may stand, and replies with both",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError(
                "write the key into an environment variable and name it with api_key_env; "
                "keys are never read from configuration files"
            )
        return data


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


_ENTRY: TypeAdapter[ModelEntry] = TypeAdapter(ModelEntry)


def model_entry(name: str, value: Mapping[str, Any]) -> ModelEntry:
    """The typed entry ``name`` of a mapping (a tool's or a JSON file's), validated with the same
    defaults as in ``params.yaml``; the library takes typed entries only."""
    try:
        return _ENTRY.validate_python(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise SettingsError(f"models.{name}: {problems}") from None
