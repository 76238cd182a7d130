"""The endpoint's view of an LLM model entry: built from the typed entry
(:mod:`lecode.config.models`, where every key, its meaning and its default are declared) by
:meth:`ModelSpec.of`; nothing here has a default of its own.

An entry ``{backend: vllm, server: <other entry>, model: <lora name>}`` selects a LoRA adapter
(or the base model) of another entry's server without starting a second one. When such an entry
selects a LoRA adapter, the runtime puts the adapter's identity into the entry's endpoint
identity (``vllm://<model_path>#lora=<adapter identity>``), so its stored responses belong to
that adapter, not to its path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lecode.config.base import SettingsError
from lecode.config.models import ModelEntry, OpenAIEntry, Price, VLLMEntry, model_entry
from lecode.llm.errors import LLMConfigError

LLM_BACKENDS = ("openai", "vllm")


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
    price: Price
    concurrency: int
    timeout: float
    max_retries: int
    json_mode: bool
    #: ``threshold_confidence`` of the entry (the ``mediq_threshold`` strategy)
    threshold_confidence: float
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
    def of(cls, name: str, entry: OpenAIEntry | VLLMEntry) -> ModelSpec:
        """The spec of the typed LLM entry ``name``."""
        serve: VLLMServe | None = None
        base_url: str | None = None
        if isinstance(entry, VLLMEntry):
            if entry.model_path is not None:
                serve = VLLMServe(
                    path=entry.model_path,
                    lora_modules=tuple(sorted(entry.lora.items())),
                    args=entry.serve_args,
                    port=entry.port,
                    gpu_memory_utilization=entry.gpu_memory_utilization,
                )
            served = entry.model or name
            server = entry.server
        else:
            base_url = entry.base_url.rstrip("/")
            served = entry.model
            server = None
        return cls(
            name=name,
            backend=entry.backend,
            served_model=served,
            base_url=base_url,
            api_key_env=entry.api_key_env,
            decoding=Decoding(
                temperature=entry.temperature,
                top_p=entry.top_p,
                max_tokens=entry.max_tokens,
                seed=entry.seed,
            ),
            price=entry.price,
            concurrency=entry.concurrency,
            timeout=entry.timeout,
            max_retries=entry.max_retries,
            json_mode=entry.json_mode,
            threshold_confidence=entry.threshold_confidence,
            server=server,
            serve=serve,
        )

    @classmethod
    def from_config(cls, name: str, cfg: Mapping[str, Any]) -> ModelSpec:
        """The spec of entry ``name`` written as a mapping (a tool's, a JSON file's): the edge
        where a mapping becomes a typed entry (:func:`~lecode.config.models.model_entry`)."""
        try:
            entry = model_entry(name, cfg)
        except SettingsError as exc:
            raise LLMConfigError(str(exc)) from None
        return cls.of(name, llm_entry(name, entry))


def llm_entry(name: str, entry: ModelEntry) -> OpenAIEntry | VLLMEntry:
    """``entry`` as an LLM entry, or :class:`LLMConfigError` naming ``name``."""
    if not isinstance(entry, (OpenAIEntry, VLLMEntry)):
        raise LLMConfigError(
            f"models.{name}: backend {entry.backend!r} is not an LLM backend {LLM_BACKENDS}"
        )
    return entry


def is_llm_entry(entry: ModelEntry) -> bool:
    return entry.backend in LLM_BACKENDS
