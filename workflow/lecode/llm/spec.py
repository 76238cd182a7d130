"""A model entry of ``params.yaml`` as a typed, validated specification.

Recognised keys (all optional unless marked):

``backend``       ``openai`` (any OpenAI-compatible endpoint) or ``vllm`` (served by the workflow)
``base_url``      endpoint, e.g. ``https://api.deepseek.com/v1`` (required for ``openai``)
``model``         the served model id sent in requests (required, except ``vllm`` with ``path``,
                  where it defaults to the entry's name)
``api_key_env``   name of the environment variable holding the key (the key itself never
                  appears in any configuration, record or message)
``temperature``, ``top_p``, ``max_tokens``, ``seed``   decoding settings (sent when set)
``price``         ``{prompt: X, completion: Y}`` per 1k tokens
``concurrency``   requests in flight per endpoint inside one job (default 4)
``timeout``       seconds per request (default 120)
``max_retries``   retries after the first attempt (default 6)
``json_mode``     send ``response_format={"type": "json_object"}`` for JSON prompts
``threshold_confidence``  threshold of the ``mediq_threshold`` expert strategy (default 0.8)

vLLM entries: ``model_path`` (a local model directory; the workflow starts ``vllm serve`` for
it, serving it under the name ``model``), ``lora`` (``{name: adapter_dir}``, served with
``--enable-lora``), ``serve_args`` (list of extra arguments), ``port`` (fixed port; default: a
free loopback port), ``gpu_memory_utilization``. An entry ``{backend: vllm, server: <other
entry>, model: <lora name>}`` selects a LoRA adapter (or the base model) of another entry's
server without starting a second one. When such an entry selects a LoRA adapter, the runtime
puts the adapter's identity into the entry's endpoint identity (``vllm://<model_path>#lora=
<adapter identity>``), so its stored responses belong to that adapter, not to its path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lecode.llm.errors import LLMConfigError

LLM_BACKENDS = ("openai", "vllm")
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RETRIES = 6


@dataclass(frozen=True)
class Decoding:
    """Sampling settings; ``None`` means 'not sent' (the server's default applies)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def request_kwargs(self, replicate: int) -> dict[str, Any]:
        """Keyword arguments for the chat call. Replicate ``r`` samples with ``seed + r``."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed + replicate
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Price:
    """US dollars (or any currency, consistently) per 1,000 tokens."""

    prompt: float = 0.0
    completion: float = 0.0
    #: price of a prompt token read from the provider's prompt cache; None: ``prompt``
    cached_prompt: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, *, cached_prompt: int = 0) -> float:
        """The cost of a call whose ``prompt_tokens`` include ``cached_prompt`` cached ones."""
        cached_price = self.prompt if self.cached_prompt is None else self.cached_prompt
        cached = min(cached_prompt, prompt_tokens)
        return (
            (prompt_tokens - cached) * self.prompt
            + cached * cached_price
            + completion_tokens * self.completion
        ) / 1000.0


@dataclass(frozen=True)
class VLLMServe:
    """How to serve a local model with ``vllm serve``."""

    path: str
    lora_modules: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    port: int | None = None
    gpu_memory_utilization: float | None = None


@dataclass(frozen=True)
class ModelSpec:
    """One LLM model entry, validated."""

    name: str
    backend: str
    served_model: str
    base_url: str | None
    api_key_env: str | None
    decoding: Decoding
    price: Price = field(default_factory=Price)
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    json_mode: bool = False
    mediq_threshold: float = 0.8
    server: str | None = None  # the model entry whose vLLM server this entry uses
    serve: VLLMServe | None = None
    identity: str | None = None  # set by the runtime for entries that use another's server
    #: the adapter's identity for an entry served as a LoRA module (``train:<digest>``,
    #: ``sha256:<hash>`` or ``path:<dir>``; set by the runtime, part of ``identity``)
    adapter: str | None = None

    @property
    def identity_url(self) -> str:
        """The endpoint as it enters cache keys: stable across runs (no ephemeral vLLM port)."""
        if self.identity:
            return self.identity
        if self.backend == "vllm":
            if self.serve is not None:
                return f"vllm://{self.serve.path}"
            return f"vllm://server/{self.server}"
        assert self.base_url is not None
        return self.base_url.rstrip("/")

    def api_key(self, environ: Mapping[str, str] | None = None) -> str:
        """The key from the named environment variable; a placeholder when none is needed."""
        env = os.environ if environ is None else environ
        if not self.api_key_env:
            return "not-needed"
        value = env.get(self.api_key_env)
        if not value:
            raise LLMConfigError(
                f"models.{self.name}: environment variable {self.api_key_env} is not set"
            )
        return value

    @classmethod
    def from_config(cls, name: str, cfg: Mapping[str, Any]) -> ModelSpec:
        backend = str(cfg.get("backend", "openai"))
        if backend not in LLM_BACKENDS:
            raise LLMConfigError(
                f"models.{name}: backend {backend!r} is not an LLM backend {LLM_BACKENDS}"
            )
        if "api_key" in cfg:
            raise LLMConfigError(
                f"models.{name}: write the key into an environment variable and name it "
                "with api_key_env; keys are never read from configuration files"
            )
        serve: VLLMServe | None = None
        server = cfg.get("server")
        base_url = cfg.get("base_url")
        model = cfg.get("model")
        if backend == "vllm":
            if server is None and not cfg.get("model_path"):
                raise LLMConfigError(f"models.{name}: vllm entry needs 'model_path' or 'server'")
            if cfg.get("model_path"):
                loras = cfg.get("lora") or {}
                serve = VLLMServe(
                    path=str(cfg["model_path"]),
                    lora_modules=tuple((str(k), str(v)) for k, v in sorted(loras.items())),
                    args=tuple(str(a) for a in cfg.get("serve_args") or ()),
                    port=int(cfg["port"]) if cfg.get("port") is not None else None,
                    gpu_memory_utilization=_opt_float(cfg.get("gpu_memory_utilization")),
                )
            model = model or name
        else:
            if not base_url:
                raise LLMConfigError(f"models.{name}: 'base_url' is required")
            if not model:
                raise LLMConfigError(f"models.{name}: 'model' (served model id) is required")
        price = cfg.get("price") or {}
        return cls(
            name=name,
            backend=backend,
            served_model=str(model),
            base_url=str(base_url).rstrip("/") if base_url else None,
            api_key_env=str(cfg["api_key_env"]) if cfg.get("api_key_env") else None,
            decoding=Decoding(
                temperature=_opt_float(cfg.get("temperature")),
                top_p=_opt_float(cfg.get("top_p")),
                max_tokens=int(cfg["max_tokens"]) if cfg.get("max_tokens") is not None else None,
                seed=int(cfg["seed"]) if cfg.get("seed") is not None else None,
            ),
            price=Price(
                prompt=float(price.get("prompt", 0.0)),
                completion=float(price.get("completion", 0.0)),
                cached_prompt=_opt_float(price.get("cached_prompt")),
            ),
            concurrency=max(1, int(cfg.get("concurrency", DEFAULT_CONCURRENCY))),
            timeout=float(cfg.get("timeout", DEFAULT_TIMEOUT)),
            max_retries=max(0, int(cfg.get("max_retries", DEFAULT_MAX_RETRIES))),
            json_mode=bool(cfg.get("json_mode", False)),
            mediq_threshold=float(cfg.get("threshold_confidence", 0.8)),
            server=str(server) if server else None,
            serve=serve,
        )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def is_llm_entry(cfg: Mapping[str, Any]) -> bool:
    return str(cfg.get("backend", "openai")) in LLM_BACKENDS
