"""One OpenAI-compatible chat endpoint per model entry: store first, then the network.

(This is the HTTP side of the LLM layer. "Client" in this project means the simulated client
role, the person consulting the lawyer: :mod:`lecode.agents.clients`.)

``complete`` looks the request up in the response store; on a hit it returns at once (no
limiter, no network). On a miss it either fails (replay mode) or calls the endpoint under the
endpoint's concurrency limit with retries, stores the response (write-ahead, durable before it
is returned) and records the call in the ledger.

Requests are the OpenAI chat-completions request (``POST {base_url}/chat/completions`` with
``Authorization: Bearer <key>``, and the ``OpenAI-Organization`` / ``OpenAI-Project`` headers
when ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` are set, as the ``openai`` SDK sends them), sent
by the HTTP library directly (``aiohttp``, :mod:`lecode.llm.http`): the JSON body is built once
by us and sent as it is, the reply decoded with ``json``, an HTTP error status raised as
:class:`~lecode.llm.retry.StatusError` (its ``Retry-After`` kept). The ``openai`` SDK's request
path (its request options, headers, response wrapping; earlier also its typed transformation of
every message) cost more CPU per call than the rest of the harness, and with many calls in
flight that CPU time keeps a slot of the concurrency limit busy beyond the endpoint's own
latency (``benchmarks/harness_vs_raw.py``); importing the SDK also cost every LLM job about
half a second (``benchmarks/import_cost.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lecode.llm.errors import FailureKind, LLMCallError, ReplayMissError
from lecode.llm.http import ChatSession, Reply, transport_failure
from lecode.llm.keys import Message, model_identity, partition_name, request_key
from lecode.llm.ledger import (
    CallRecord,
    UsageLedger,
    call_usage,
    reasoning_tokens,
    reported_cached_tokens,
    reported_reasoning_tokens,
)
from lecode.llm.limits import EndpointLimits, Ticket
from lecode.llm.logs import LOG
from lecode.llm.parsing import split_reasoning
from lecode.llm.retry import EmptyResponseError, Failure, RetryPolicy, StatusError, classify
from lecode.llm.secrets import redact, register_secret
from lecode.llm.spec import ModelSpec
from lecode.llm.store import ResponseStore, StoredResponse
from lecode.records import RoleUsage

USER_AGENT = "lecode (OpenAI-compatible chat client)"
#: Environment variables whose value the ``openai`` SDK sends as a header, sent the same way.
SDK_ENV_HEADERS = (
    ("OPENAI_ORG_ID", "OpenAI-Organization"),
    ("OPENAI_PROJECT_ID", "OpenAI-Project"),
)


@dataclass(frozen=True)
class Completion:
    """A response as the roles see it, with its accounting."""

    text: str
    key: str
    cached: bool
    retries: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    model: str = ""
    system_fingerprint: str = ""
    reasoning: str = ""
    reasoning_tokens: int = 0
    cached_prompt_tokens: int = 0

    def usage(self) -> RoleUsage:
        return call_usage(self)


class EndpointUnreachable(Exception):
    """The endpoint was given up for this job (:meth:`EndpointLimits.found_no_server`)."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.kind: FailureKind = "timeout" if kind == "timeout" else "connection"


class Endpoint:
    """Chat completions for one model entry, through its OpenAI-compatible endpoint."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        store: ResponseStore,
        limits: EndpointLimits,
        ledger: UsageLedger,
        retry: RetryPolicy,
        replay: bool,
        resolve_base_url: Callable[[], str] | None = None,
        environ: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.spec = spec
        self.store = store
        self.limits = limits
        self.ledger = ledger
        self.retry = retry
        self.replay = replay
        self._resolve_base_url = resolve_base_url
        self._environ = environ
        self._rng = rng or random.Random()
        self.identity = model_identity(spec.name, spec.identity_url, spec.served_model)
        self.partition = partition_name(self.identity)
        # the endpoint's address as far as limits go: a LoRA entry shares its server's
        self.address = spec.identity_url
        limits.declare(self.address, spec.concurrency, spec.timeout)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ChatSession]
        self._clients = weakref.WeakKeyDictionary()
        self._guards: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._guards = weakref.WeakKeyDictionary()
        self.seen_models: set[str] = set()
        self.seen_fingerprints: set[str] = set()
        self.network_calls = 0

    # -- request identity -------------------------------------------------------------------
    def decoding_for(self, replicate: int, json_mode: bool) -> dict[str, Any]:
        out = self.spec.decoding.request_kwargs(replicate)
        if json_mode and self.spec.json_mode:
            out["response_format"] = {"type": "json_object"}
        return out

    def key_for(
        self,
        messages: Sequence[Message],
        *,
        template_hash: str,
        replicate: int = 0,
        json_mode: bool = False,
    ) -> str:
        return request_key(
            self.identity,
            messages,
            self.decoding_for(replicate, json_mode),
            template_hash=template_hash,
            replicate=replicate,
        )

    # -- the call ---------------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        role: str,
        purpose: str,
        template_hash: str,
        replicate: int = 0,
        json_mode: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> Completion:
        decoding = self.decoding_for(replicate, json_mode)
        key = request_key(
            self.identity, messages, decoding, template_hash=template_hash, replicate=replicate
        )
        hit = self.store.get(self.partition, key)
        if hit is not None:
            return self._finish(hit, key, role, purpose, cached=True, retries=0, latency=0.0)
        if self.replay:
            hit = self.store.get(self.partition, key, refresh=True)
            if hit is not None:
                return self._finish(hit, key, role, purpose, cached=True, retries=0, latency=0.0)
            raise ReplayMissError(self._describe_miss(messages, role, purpose, key), key=key)
        started = time.perf_counter()
        response, retries = await self._request(messages, decoding, role, purpose, key, headers)
        record = {
            "key": key,
            "model": self.identity,
            "role": role,
            "purpose": purpose,
            "template": template_hash,
            "replicate": replicate,
            "request": {"messages": [dict(m) for m in messages], "decoding": decoding},
            "response": response.as_dict(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        # the response stored first under this key, by any job, is the one every job uses
        # (and the one a replay reads): ours unless another job sent the same request first
        response = await self.store.put(self.partition, key, record)
        latency = time.perf_counter() - started
        return self._finish(
            response, key, role, purpose, cached=False, retries=retries, latency=latency
        )

    def _finish(
        self,
        response: StoredResponse,
        key: str,
        role: str,
        purpose: str,
        *,
        cached: bool,
        retries: int,
        latency: float,
    ) -> Completion:
        if response.model:
            self.seen_models.add(response.model)
        if response.system_fingerprint:
            self.seen_fingerprints.add(response.system_fingerprint)
        cached_prompt = response.cached_prompt_tokens or 0
        cost = self.spec.price.cost(
            response.prompt_tokens, response.completion_tokens, cached_prompt=cached_prompt
        )
        n_reasoning = reasoning_tokens(
            "\n".join(r for r in (response.reasoning, split_reasoning(response.text)[1]) if r),
            reported=response.reasoning_tokens,
            completion_tokens=response.completion_tokens,
        )
        self.ledger.record(
            CallRecord(
                model=self.spec.name,
                role=role,
                purpose=purpose,
                key=key[:16],
                cached=cached,
                retries=retries,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                cost=cost,
                latency_s=round(latency, 4),
                reasoning_tokens=n_reasoning,
                cached_prompt_tokens=cached_prompt,
            )
        )
        return Completion(
            text=response.text,
            key=key,
            cached=cached,
            retries=retries,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cost=cost,
            model=response.model,
            system_fingerprint=response.system_fingerprint,
            reasoning=response.reasoning,
            reasoning_tokens=n_reasoning,
            cached_prompt_tokens=cached_prompt,
        )

    def _describe_miss(self, messages: Sequence[Message], role: str, purpose: str, key: str) -> str:
        last = messages[-1]["content"] if messages else ""
        snippet = " ".join(last.split())[:120]
        corrupt = self.store.describe_corrupt(self.partition, key)
        return (
            f"replay mode: no stored response for {role}/{purpose} request to model "
            f"{self.spec.name!r} ({self.spec.served_model} at {self.address}), key {key[:16]}; "
            f"last message begins: {snippet!r}" + (f"; {corrupt}" if corrupt else "")
        )

    async def _client(self) -> ChatSession:
        """The HTTP session of the running event loop, created on first use, with the chat
        completions URL and the headers every request carries. It is closed inside that loop
        when the loop shuts down (``asyncio.run`` finalises async generators), so no connection
        outlives its loop. :mod:`lecode.llm.retry` decides, counts and logs every retry."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            base_url = self._resolve_base_url() if self._resolve_base_url else self.spec.base_url
            api_key = self.spec.api_key(self._environ)
            register_secret(api_key)
            headers = {
                "Accept": "application/json",
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "Authorization": f"Bearer {api_key}",
            }
            for var, header in SDK_ENV_HEADERS:
                if os.environ.get(var):
                    headers[header] = os.environ[var]
            url = str(base_url).rstrip("/") + "/chat/completions"
            # no read timeout in the session: :meth:`_post` keeps time, minding the server's
            # progress
            client = ChatSession(url, headers, self.spec.timeout, read_timeout=None)
            self._clients[loop] = client
            guard = _close_at_loop_end(client)
            await guard.__anext__()
            self._guards[loop] = guard
        return client

    async def _request(
        self,
        messages: Sequence[Message],
        decoding: Mapping[str, Any],
        role: str,
        purpose: str,
        key: str,
        headers: Mapping[str, str] | None,
    ) -> tuple[StoredResponse, int]:
        address = self.address
        extra_headers = {"X-Lecode-Role": role, "X-Lecode-Purpose": purpose, **(headers or {})}
        body = {"model": self.spec.served_model, "messages": [dict(m) for m in messages]}
        content = json.dumps({**body, **decoding}, ensure_ascii=False).encode("utf-8")
        retries = 0
        client = await self._client()
        # The body goes out as it is: the chat-completions request of the OpenAI API.
        while True:
            try:
                ticket = await self.limits.acquire(address)
                if ticket is None:
                    state = self.limits.state(address)
                    raise EndpointUnreachable(state.unreachable or "", state.unreachable_kind)
                try:
                    self.network_calls += 1
                    try:
                        reply = await self._post(client, content, extra_headers, ticket)
                    except Exception as exc:
                        self._learn(exc, ticket)
                        raise
                    self.limits.replied(address)
                finally:
                    await self.limits.release(address)
                if not 200 <= reply.status < 300:
                    raise StatusError.from_reply(reply.status, reply.body, reply.retry_after)
                return parse_completion(reply.body), retries
            except Exception as exc:
                if isinstance(exc, EndpointUnreachable):
                    failure = Failure(exc.kind, None, None, str(exc), final=True)
                else:
                    failure = classify(exc)
                if not failure.retryable or retries >= self.spec.max_retries:
                    # (a request refused as unreachable made no attempt this time)
                    attempts = retries + int(not isinstance(exc, EndpointUnreachable))
                    message = redact(
                        f"model {self.spec.name!r} at {client.url} ({role}/{purpose}): "
                        f"{failure.kind} after {attempts} attempt(s): {failure.detail}"
                    )
                    LOG.error("LLM call failed: %s", message)
                    self.ledger.record(
                        CallRecord(
                            model=self.spec.name,
                            role=role,
                            purpose=purpose,
                            key=key[:16],
                            cached=False,
                            retries=retries,
                            prompt_tokens=0,
                            completion_tokens=0,
                            cost=0.0,
                            latency_s=0.0,
                            status="error",
                            error=failure.kind,
                        )
                    )
                    raise LLMCallError(
                        message,
                        kind=failure.kind,
                        model=self.spec.name,
                        attempts=attempts,
                        retries=retries,
                        status=failure.status,
                        endpoint=client.url,
                    ) from None
                delay = self.retry.delay(failure, retries, self._rng)
                retries += 1
                LOG.warning(
                    "retry %d/%d for model %r (%s/%s, key %s): %s; waiting %.2fs",
                    retries,
                    self.spec.max_retries,
                    self.spec.name,
                    role,
                    purpose,
                    key[:12],
                    failure.detail,
                    delay,
                )
                await asyncio.sleep(delay)

    async def _post(
        self, client: ChatSession, content: bytes, headers: Mapping[str, str], ticket: Ticket
    ) -> Reply:
        """One attempt. It times out ``timeout`` seconds after the later of its sending and
        the endpoint's last reply (:meth:`EndpointLimits.deadline`): a request queued behind
        others at a server that answers one at a time waits while the server makes progress."""
        task = asyncio.ensure_future(client.post(content, headers))
        try:
            while True:
                deadline = self.limits.deadline(self.address, ticket, self.spec.timeout)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no reply within {self.spec.timeout:g} s")
                done, _ = await asyncio.wait({task}, timeout=remaining)
                if done:
                    return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _learn(self, exc: BaseException, ticket: Ticket) -> None:
        """What a failed attempt tells about the endpoint (while it is still counted in
        flight): a timeout with other requests in flight halves the limit; attempts that get no
        answer from an endpoint that never answered make it unreachable."""
        if isinstance(exc, TimeoutError):
            kind, detail = "timeout", f"no reply within {self.spec.timeout:g} s"
            backoff = self.limits.timed_out(self.address, ticket)
            if backoff:
                LOG.warning("model %r: %s", self.spec.name, backoff)
        else:
            transport = transport_failure(exc)
            if transport is None or transport.kind != "connection" or not transport.retryable:
                return
            kind, detail = "connection", transport.detail
        gone = self.limits.found_no_server(self.address, kind, detail)
        if gone:
            LOG.error("model %r at %s: %s", self.spec.name, self.address, gone)

    def drop_connections(self) -> None:
        self._clients = weakref.WeakKeyDictionary()
        self._guards = weakref.WeakKeyDictionary()

    async def aclose(self) -> None:
        clients = list(self._clients.values())
        self.drop_connections()
        for client in clients:
            with contextlib.suppress(Exception):  # a session bound to a finished loop
                await client.close()


async def _close_at_loop_end(client: ChatSession) -> AsyncIterator[None]:
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await client.close()


def parse_completion(raw: str | bytes) -> StoredResponse:
    """A chat completion body (JSON text) as stored. A body that is not a completion raises
    ``json.JSONDecodeError``/``KeyError``/``IndexError``/``TypeError`` (classified as
    ``malformed``); one without text raises :class:`EmptyResponseError`."""
    data = json.loads(raw)
    choice = data["choices"][0]
    text = choice["message"].get("content")
    if not isinstance(text, str) or not text.strip():
        raise EmptyResponseError()
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise TypeError("usage is not an object")
    message = choice["message"]
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    return StoredResponse(
        text=text,
        model=str(data.get("model") or ""),
        system_fingerprint=str(data.get("system_fingerprint") or ""),
        finish_reason=str(choice.get("finish_reason") or ""),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        reasoning=reasoning if isinstance(reasoning, str) else "",
        reasoning_tokens=reported_reasoning_tokens(usage),
        cached_prompt_tokens=reported_cached_tokens(usage),
    )
