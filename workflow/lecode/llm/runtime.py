"""The LLM layer's per-job object: response store, endpoint limits, retry policy, ledger.

Build one per job (``LLMRuntime.create``), put it into ``RoleContext.runtime``, build roles,
run, then ``await runtime.aclose()`` (or ``runtime.close()`` outside an event loop).
Replay mode (``replay=True`` or ``LECODE_REPLAY=1``) makes no network call and never starts or
contacts a server: every request must be in the store, the first miss raises
:class:`~lecode.llm.errors.ReplayMissError`.

A vLLM entry's server is found (or started, when the run allows it) on the entry's first
request (:func:`lecode.llm.vllm.ensure_base_url`). An entry served as a LoRA adapter carries the
adapter's identity (``adapters:`` of the params, computed by the plan): it enters the entry's
request keys, and an adapter published by the workflow must have been trained under it
(:meth:`LLMRuntime.check_adapter`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lecode.config.models import ModelEntry, VLLMEntry
from lecode.config.sections import LLMSettings, SimulationSettings, replay_forced
from lecode.llm.endpoint import Endpoint
from lecode.llm.errors import LLMConfigError
from lecode.llm.ledger import UsageLedger
from lecode.llm.limits import EndpointLimits
from lecode.llm.logs import LOG
from lecode.llm.retry import RetryPolicy
from lecode.llm.spec import ModelSpec, llm_entry
from lecode.llm.store import ResponseStore
from lecode.llm.vllm import ensure_base_url

if TYPE_CHECKING:
    from lecode.specs import LLMRuntimeSpec

DEFAULT_STORE = Path(LLMSettings().store_dir)
#: What ``publish_lora`` writes beside a published adapter (the training job's provenance).
ADAPTER_PROVENANCE = "lecode_provenance.json"


class LLMRuntime:
    def __init__(
        self,
        store: ResponseStore,
        *,
        replay: bool,
        retry: RetryPolicy,
        ledger: UsageLedger,
        servers_dir: Path,
        models: Mapping[str, ModelEntry] | None = None,
        environ: Mapping[str, str] | None = None,
        adapters: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.replay = replay
        self.retry = retry
        self.ledger = ledger
        self.servers_dir = servers_dir
        #: every entry the job may need
        self.models: dict[str, ModelEntry] = dict(models or {})
        self.environ = environ
        self.adapters = dict(adapters or {})
        # the jobs of a run share what they see of each endpoint's progress (lecode.llm.limits)
        self.limits = EndpointLimits(None if replay else Path(servers_dir) / "progress")
        self.default_max_turns = SimulationSettings().max_turns
        self.job = ""
        self._endpoints: dict[str, Endpoint] = {}

    @classmethod
    def create(
        cls,
        store_dir: str | Path = DEFAULT_STORE,
        *,
        replay: bool = False,
        retry: RetryPolicy | None = None,
        ledger_path: str | Path | None = None,
        servers_dir: str | Path | None = None,
        models: Mapping[str, ModelEntry] | None = None,
        environ: Mapping[str, str] | None = None,
        durable: bool = True,
        adapters: Mapping[str, str] | None = None,
        max_turns: int | None = None,
    ) -> LLMRuntime:
        """``store_dir``: the response store (default ``store/responses``); ``servers_dir``:
        vLLM state files (default: ``servers`` beside the store); ``models``: the whole
        ``models:`` mapping (lets LoRA entries find their server's model path); ``adapters``:
        the adapter identity of each entry served as a LoRA adapter; ``max_turns``: the LLM
        experts' clarifying questions before advice (default: ``simulation.max_turns``'s)."""
        replay = replay or replay_forced(environ)
        store_dir = Path(store_dir)
        runtime = cls(
            ResponseStore(store_dir, durable=durable, readonly=replay),
            replay=replay,
            retry=retry or RetryPolicy(),
            ledger=UsageLedger(ledger_path),
            servers_dir=Path(servers_dir) if servers_dir else store_dir.parent / "servers",
            models=models,
            environ=environ,
            adapters=adapters,
        )
        if max_turns is not None:
            runtime.default_max_turns = max_turns
        return runtime

    @classmethod
    def from_spec(
        cls,
        runtime: LLMRuntimeSpec,
        *,
        job: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> LLMRuntime:
        """The runtime of one workflow job, from its spec's typed ``runtime`` (the store, replay
        mode, vLLM state files, per-job ledger, retry delays, the model entries and adapter
        identities the plan put there). ``LECODE_REPLAY=1`` also forces replay."""
        llm = runtime.llm
        ledger_path = None
        if llm.ledger_dir:
            slug = re.sub(r"[^A-Za-z0-9._-]+", "_", job).strip("_") or "job"
            ledger_path = Path(llm.ledger_dir) / f"{slug}.jsonl"
        out = cls.create(
            llm.store_dir,
            replay=llm.replay,
            retry=RetryPolicy.of(llm.retry),
            ledger_path=ledger_path,
            servers_dir=llm.servers_path,
            models=runtime.models,
            environ=environ,
            adapters=runtime.adapters,
            max_turns=runtime.max_turns,
        )
        out.job = job
        return out

    def spec(self, model_name: str, entry: ModelEntry) -> ModelSpec:
        spec = ModelSpec.of(model_name, llm_entry(model_name, entry))
        if spec.backend == "vllm" and spec.serve is None and spec.server:
            server = self.models.get(spec.server)
            if isinstance(server, VLLMEntry) and server.model_path:
                identity = f"vllm://{server.model_path}"
                adapter = self.adapters.get(model_name)
                if adapter:
                    # the adapter, not its path, names the model (the fragment keeps the
                    # server's address for the concurrency limits)
                    spec = replace(spec, identity=f"{identity}#lora={adapter}", adapter=adapter)
                else:
                    spec = replace(spec, identity=identity)
        return spec

    def adapter_path(self, model_name: str) -> str | None:
        """The adapter directory a LoRA entry selects (its server's ``lora:`` mapping)."""
        entry = self.models.get(model_name)
        if not isinstance(entry, VLLMEntry) or entry.server is None:
            return None
        server = self.models.get(entry.server)
        if not isinstance(server, VLLMEntry):
            return None
        return server.lora.get(entry.model or model_name)

    def check_adapter(self, model_name: str) -> None:
        """An adapter identified by its training (``train:<digest>``) must be the published
        output of that training: its ``lecode_provenance.json`` names the digest. Otherwise
        (missing, or trained under other settings) :class:`LLMConfigError`."""
        identity = self.adapters.get(model_name)
        if not identity or not identity.startswith("train:"):
            return
        expected = identity.removeprefix("train:")
        path = self.adapter_path(model_name)
        prov = Path(path or "") / ADAPTER_PROVENANCE
        try:
            trained = json.loads(prov.read_text(encoding="utf-8")).get("spec")
        except (OSError, ValueError, AttributeError):
            trained = None
        if trained != expected:
            found = f"was trained by {trained}" if trained else f"has no readable {prov}"
            raise LLMConfigError(
                f"models.{model_name}: the adapter {path} {found}, but this evaluation is of "
                f"the adapter trained by {expected} (the current sft settings); publish it with "
                "the target sft_adapters (docs/sft.md)"
            )

    def endpoint(self, model_name: str, entry: ModelEntry) -> Endpoint:
        """The (shared) endpoint of one model entry."""
        endpoint = self._endpoints.get(model_name)
        if endpoint is None:
            spec = self.spec(model_name, entry)
            resolver = None
            if spec.backend == "vllm":
                server = spec.server or spec.name

                def resolver() -> str:
                    self.check_adapter(model_name)
                    return ensure_base_url(
                        server,
                        self.models,
                        self.servers_dir,
                        replay=self.replay,
                        environ=self.environ,
                    )

            endpoint = Endpoint(
                spec,
                store=self.store,
                limits=self.limits,
                ledger=self.ledger,
                retry=self.retry,
                replay=self.replay,
                resolve_base_url=resolver,
                environ=self.environ,
            )
            self._endpoints[model_name] = endpoint
        elif endpoint.spec != self.spec(model_name, entry):
            raise LLMConfigError(f"models.{model_name}: two different configurations in one job")
        return endpoint

    @property
    def network_calls(self) -> int:
        return sum(e.network_calls for e in self._endpoints.values())

    def log_summary(self) -> None:
        """Per role and model: calls, cache hits, retries, errors, tokens, cost (job log)."""
        for line in self.ledger.summary_lines():
            LOG.info("usage %s%s", f"[{self.job}] " if self.job else "", line)

    async def aclose(self) -> None:
        """Close the endpoints' HTTP connections of the running loop, the store and the
        ledger."""
        for endpoint in self._endpoints.values():
            await endpoint.aclose()
        self._finish()

    def close(self) -> None:
        """Close from synchronous code, e.g. after ``asyncio.run`` returned. HTTP clients
        belong to their (finished) event loops and are simply dropped."""
        for endpoint in self._endpoints.values():
            endpoint.drop_connections()
        self._finish()

    def _finish(self) -> None:
        self.log_summary()
        self.store.close()
        self.ledger.close()
