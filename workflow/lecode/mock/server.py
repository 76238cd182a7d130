"""The mock OpenAI-compatible HTTP server (stdlib, loopback only).

Endpoints: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health``, and control
endpoints ``GET /_mock/stats``, ``POST /_mock/config`` (``{"faults": {...}, "latency": s,
"slow_seconds": s}``), ``POST /_mock/reset``.

The role comes from the ``X-Lecode-Role`` header the LLM layer sends (``X-Lecode-Purpose``,
``X-Lecode-Format`` refine it); an expert call's ``X-Lecode-Reply`` names the reply its
strategy declares for it (a move when absent); ``X-Lecode-Case``, ``X-Lecode-Dialogue``,
``X-Lecode-Turn`` and ``X-Lecode-Question`` (percent-encoded) say which case, dialogue and
turn a call belongs to, so the players answer any strategy as the case would be answered.
Request bodies are counted by digest so tests can assert which requests reached the endpoint;
the log names each request's case and dialogue, and with ``keep_exchanges`` the mock also keeps
each request's messages and reply (:meth:`MockServer.exchanges`), so tests group requests by
dialogue the way the mock does.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from lecode.mock.annotator import play_annotator
from lecode.mock.casedata import CaseText, read_cases
from lecode.mock.faults import FaultConfig
from lecode.mock.players import Players

LOOPBACK = "127.0.0.1"
#: Expert replies that make a move (the ``no_marker`` fault drops their marker).
MOVE_REPLIES = ("move", "question", "advice")


def body_digest(body: dict[str, Any]) -> str:
    canon = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


CACHE_BLOCK = 32
"""Characters per block of the mock's prompt cache (the mock counts a character as a token)."""
USAGE_SHAPES = ("openai", "deepseek", "none")


@dataclass
class ProviderShape:
    """What the mock reports about the model that answered and its prompt cache.

    ``usage``: how cached prompt tokens are reported: ``openai`` (also DashScope):
    ``usage.prompt_tokens_details.cached_tokens``; ``deepseek``: ``prompt_cache_hit_tokens`` and
    ``prompt_cache_miss_tokens``; ``none``: not at all. A prompt's cached part is its longest
    prefix of whole :data:`CACHE_BLOCK`-character blocks that an earlier prompt to the same model
    began with, as a provider's prefix cache would find it. ``answer_models`` maps a requested
    model id to the id the reply names (an alias served by a later model);
    ``fingerprint_change_after``: after this many replies the ``system_fingerprint`` changes.
    """

    usage: str = "openai"
    answer_models: dict[str, str] = field(default_factory=dict)
    fingerprint: str = "mock-fp-1"
    fingerprint_change_after: int | None = None

    def __post_init__(self) -> None:
        if self.usage not in USAGE_SHAPES:
            raise ValueError(f"usage shape {self.usage!r}: choose one of {', '.join(USAGE_SHAPES)}")


def cached_prefix(seen: set[str], text: str) -> int:
    """Characters of ``text``'s longest whole-block prefix already in ``seen`` (block-chained
    digests), adding every block prefix of ``text`` to ``seen``."""
    h = hashlib.sha256()
    cached, hit = 0, True
    for start in range(0, len(text) - len(text) % CACHE_BLOCK, CACHE_BLOCK):
        h.update(text[start : start + CACHE_BLOCK].encode())
        digest = h.copy().hexdigest()
        if hit and digest in seen:
            cached = start + CACHE_BLOCK
        else:
            hit = False
            seen.add(digest)
    return cached


def usage_payload(shape: str, prompt: int, completion: int, cached: int) -> dict[str, Any]:
    """The ``usage`` object of a reply in the provider ``shape``."""
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if shape == "openai":
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    elif shape == "deepseek":
        out["prompt_cache_hit_tokens"] = cached
        out["prompt_cache_miss_tokens"] = prompt - cached
    return out


#: What a chat model writes before its marker (fault ``preamble``): before a question, before
#: advice.
PREAMBLES = ("好的，我了解了。", "明白。")


class _State:
    def __init__(
        self,
        players: Players,
        faults: FaultConfig,
        latency: float,
        served_models: Sequence[str],
        strict_models: bool,
        api_key: str | None,
        shape: ProviderShape | None = None,
        keep_exchanges: bool = False,
    ) -> None:
        self.players = players
        self.keep_exchanges = keep_exchanges
        self.shape = shape or ProviderShape()
        self.faults = faults
        self.latency = latency
        self.served_models = list(served_models)
        self.strict_models = strict_models
        self.api_key = api_key
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.attempts: Counter[str] = Counter()
            self.requests: Counter[str] = Counter()
            self.ok: Counter[str] = Counter()
            self.fault_counts: Counter[str] = Counter()
            self.served: list[str] = []
            self.log: list[dict[str, str]] = []
            self.models_seen: Counter[str] = Counter()
            self.inflight = 0
            self.max_inflight = 0
            self.replies = 0
            self.cache_blocks: dict[str, set[str]] = {}
            self.exchanges: list[dict[str, Any]] = []

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": dict(self.requests),
                "ok": dict(self.ok),
                "faults": dict(self.fault_counts),
                "served": list(self.served),
                "log": list(self.log),
                "models": dict(self.models_seen),
                "total_requests": sum(self.requests.values()),
                "max_inflight": self.max_inflight,
            }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _started = 0.0

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # -- plumbing -------------------------------------------------------------------------
    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        reason = self.responses.get(status, ("",))[0]
        head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json"]
        head.append(f"Content-Length: {len(payload)}")
        for k, v in (headers or {}).items():
            head.append(f"{k}: {v}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode(), headers)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    # -- routes ---------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        st = self.server.state
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "owned_by": "mock"} for m in st.served_models]
            self._json(200, {"object": "list", "data": data})
        elif path == "/health":
            self._send(200, b"{}")
        elif path == "/_mock/stats":
            self._json(200, st.stats())
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._started = time.monotonic()
        st = self.server.state
        path = self.path.split("?")[0].rstrip("/")
        raw = self._body()
        if path == "/_mock/reset":
            st.reset()
            self._json(200, {"ok": True})
            return
        if path == "/_mock/config":
            cfg = json.loads(raw or b"{}")
            if "faults" in cfg:
                roles = cfg.get("fault_roles")
                st.faults = FaultConfig(
                    rates={k: float(v) for k, v in cfg["faults"].items()},
                    slow_seconds=float(cfg.get("slow_seconds", st.faults.slow_seconds)),
                    roles=frozenset(roles) if roles else None,
                    match=cfg.get("fault_match") or None,
                )
            elif "slow_seconds" in cfg:
                st.faults.slow_seconds = float(cfg["slow_seconds"])
            if "latency" in cfg:
                st.latency = float(cfg["latency"])
            self._json(200, {"ok": True})
            return
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._json(404, {"error": {"message": f"no route {path}"}})
            return
        with st.lock:
            st.inflight += 1
            st.max_inflight = max(st.max_inflight, st.inflight)
        try:
            self._chat(st, raw)
        finally:
            with st.lock:
                st.inflight -= 1

    def _chat(self, st: _State, raw: bytes) -> None:
        try:
            body = json.loads(raw)
            messages = body["messages"]
            model = str(body.get("model", ""))
        except (ValueError, KeyError, TypeError):
            self._json(400, {"error": {"message": "invalid request body"}})
            return
        role = self.headers.get("X-Lecode-Role", "expert")
        purpose = self.headers.get("X-Lecode-Purpose", "turn")
        digest = body_digest(body)
        with st.lock:
            attempt = st.attempts[digest]
            st.attempts[digest] += 1
            st.requests[role] += 1
            st.models_seen[model] += 1
        auth = self.headers.get("Authorization", "")
        if st.api_key is not None and auth != f"Bearer {st.api_key}":
            self._fault(st, role, purpose, digest, "unauthorized")
            self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
            return
        if st.strict_models and model not in st.served_models:
            self._fault(st, role, purpose, digest, "unknown_model")
            self._json(404, {"error": {"message": f"model {model} does not exist"}})
            return
        faults = st.faults
        text = (
            "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
            if faults.match is not None
            else ""
        )
        fault = faults.http_fault(role, digest, attempt, text)
        if fault is not None:
            self._fault(st, role, purpose, digest, fault)
            if fault == "rate_limit":
                self._json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
                return
            if fault == "server_error":
                self._json(500, {"error": {"message": "internal error"}})
                return
            if fault == "malformed_body":
                self._send(200, b'{"id": "mock", "choices": [{"message": {"content": "')
                return
            if fault == "unauthorized_echo":
                self._json(401, {"error": {"message": f"bad credentials: {auth}"}})
                return
            if fault == "timeout":
                time.sleep(faults.slow_seconds)
        text = "" if fault == "empty" else self._play(st, role, purpose, messages, digest)
        if st.latency > 0:  # a reply takes `latency` from its request, processing included
            time.sleep(max(0.0, st.latency - (time.monotonic() - self._started)))
        prompt_text = "".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        shape = st.shape
        with st.lock:
            cached = cached_prefix(st.cache_blocks.setdefault(model, set()), prompt_text)
            st.replies += 1
            changed = (
                shape.fingerprint_change_after is not None
                and st.replies > shape.fingerprint_change_after
            )
        payload = {
            "id": "mock-" + digest[:12],
            "object": "chat.completion",
            "created": 0,
            "model": shape.answer_models.get(model, model),
            "system_fingerprint": shape.fingerprint + ("-b" if changed else ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage_payload(shape.usage, len(prompt_text), len(text), cached),
        }
        if fault is None:
            entry = {"digest": digest, "role": role, "purpose": purpose, "status": "ok"}
            entry |= self._dialogue()
            with st.lock:
                st.ok[role] += 1
                st.served.append(digest)
                st.log.append(entry)
                if st.keep_exchanges:
                    st.exchanges.append({**entry, "messages": messages, "reply": text})
        self._json(200, payload)

    def _fault(self, st: _State, role: str, purpose: str, digest: str, kind: str) -> None:
        entry = {"digest": digest, "role": role, "purpose": purpose, "status": kind}
        entry |= self._dialogue()
        with st.lock:
            st.fault_counts[kind] += 1
            st.log.append(entry)

    def _meta(self, name: str) -> str | None:
        """The decoded ``X-Lecode-<name>`` header, or None when the request has none."""
        raw = self.headers.get(f"X-Lecode-{name}")
        return None if raw is None else unquote(raw)

    def _turn(self) -> int | None:
        raw = self._meta("Turn")
        return int(raw) if raw is not None and raw.isdigit() else None

    def _dialogue(self) -> dict[str, str]:
        """The case and dialogue the request names (empty strings when it names none)."""
        return {"case": self._meta("Case") or "", "dialogue": self._meta("Dialogue") or ""}

    def _play(
        self, st: _State, role: str, purpose: str, messages: list[dict[str, Any]], digest: str
    ) -> str:
        users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
        main = users[0] if users else ""
        everything = "\n".join(str(m.get("content", "")) for m in messages[:2])
        faults = st.faults
        if role == "expert":
            reply = self.headers.get("X-Lecode-Reply") or "move"
            text = st.players.expert(
                reply,
                main,
                json_format=self.headers.get("X-Lecode-Format") == "json",
                no_marker=reply in MOVE_REPLIES and faults.content_fault("no_marker", digest),
                case_id=self._meta("Case"),
                turn=self._turn(),
            )
            if reply in MOVE_REPLIES and faults.content_fault("preamble", digest):
                text = PREAMBLES[text.startswith("建议")] + "\n" + text
            return text
        if role == "client":
            return st.players.client(
                everything,
                leaks=faults.content_fault("client_leaks", digest),
                invents=faults.content_fault("client_invents", digest),
                withholds=faults.content_fault("client_withholds", digest),
                contradicts=faults.content_fault("client_contradicts", digest),
                case_id=self._meta("Case"),
                question=self._meta("Question"),
            )
        if role == "matcher":
            return st.players.matcher(
                main,
                bad_index=faults.content_fault("matcher_bad_index", digest),
                bad_json=faults.content_fault("bad_json", digest),
                digest=digest,
            )
        if role == "judge" and purpose == "reliability":
            return st.players.reliability_judge(main)
        if role == "writer" and purpose == "reliability_questions":
            return st.players.reliability_questions(main)
        if role == "annotator":
            return play_annotator(purpose, main)
        if role == "judge":
            return st.players.judge(
                main,
                out_of_range=faults.content_fault("judge_out_of_range", digest),
                bad_json=faults.content_fault("bad_json", digest),
                drift=faults.content_fault("judge_drift", digest),
            )
        return "好的。"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True
    state: _State


class MockServer:
    """In-process mock endpoint. ``start()`` returns the base URL (``http://127.0.0.1:P/v1``)."""

    def __init__(
        self,
        cases: Sequence[CaseText] = (),
        *,
        case_files: Iterable[str | Path] = (),
        port: int = 0,
        latency: float = 0.0,
        faults: dict[str, float] | None = None,
        slow_seconds: float = 3.0,
        served_models: Sequence[str] = ("mock",),
        strict_models: bool = False,
        api_key: str | None = None,
        shape: ProviderShape | None = None,
        keep_exchanges: bool = False,
    ) -> None:
        """``keep_exchanges``: keep every answered request's messages and reply
        (:meth:`exchanges`; in this process only)."""
        all_cases = [*cases, *read_cases(case_files)]
        self._state = _State(
            Players(all_cases),
            FaultConfig(rates=dict(faults or {}), slow_seconds=slow_seconds),
            latency,
            served_models,
            strict_models,
            api_key,
            shape,
            keep_exchanges,
        )
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("mock server not started")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/v1"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1]) if self._server else self._port

    def start(self) -> str:
        server = _Server((LOOPBACK, self._port), _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True, name="mock")
        self._thread.start()
        return self.url

    def serve_forever(self) -> None:
        """Serve in the calling thread (the CLI)."""
        server = _Server((LOOPBACK, self._port), _Handler)
        server.state = self._state
        self._server = server
        server.serve_forever()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> MockServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- control --------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return self._state.stats()

    def requests_by_role(self) -> dict[str, int]:
        return dict(self._state.stats()["requests"])

    def exchanges(self) -> list[dict[str, Any]]:
        """Each answered request in order: its log entry (digest, role, purpose, case,
        dialogue), ``messages`` and ``reply`` (kept only with ``keep_exchanges``)."""
        with self._state.lock:
            return list(self._state.exchanges)

    def set_faults(
        self,
        rates: dict[str, float],
        *,
        slow_seconds: float | None = None,
        roles: Iterable[str] | None = None,
        match: str | None = None,
    ) -> None:
        self._state.faults = FaultConfig(
            rates=dict(rates),
            slow_seconds=self._state.faults.slow_seconds if slow_seconds is None else slow_seconds,
            roles=frozenset(roles) if roles is not None else None,
            match=match,
        )

    def set_latency(self, seconds: float) -> None:
        self._state.latency = seconds

    def reset(self) -> None:
        self._state.reset()


class MockControl:
    """Controls a mock server (in this or another process) over HTTP."""

    def __init__(self, url: str) -> None:
        self.root = url.rsplit("/v1", 1)[0]

    def stats(self) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{self.root}/_mock/stats", timeout=10).json()
        return data

    def requests_by_role(self) -> dict[str, int]:
        return dict(self.stats()["requests"])

    def set_faults(
        self,
        rates: dict[str, float],
        *,
        slow_seconds: float | None = None,
        roles: Iterable[str] | None = None,
        match: str | None = None,
    ) -> None:
        body: dict[str, Any] = {"faults": rates}
        if slow_seconds is not None:
            body["slow_seconds"] = slow_seconds
        if roles is not None:
            body["fault_roles"] = list(roles)
        if match is not None:
            body["fault_match"] = match
        httpx.post(f"{self.root}/_mock/config", json=body, timeout=10).raise_for_status()

    def set_latency(self, seconds: float) -> None:
        httpx.post(f"{self.root}/_mock/config", json={"latency": seconds}, timeout=10)

    def reset(self) -> None:
        httpx.post(f"{self.root}/_mock/reset", timeout=10).raise_for_status()


def spawn_mock(
    case_files: Sequence[str | Path],
    *,
    latency: float = 0.0,
    faults: dict[str, float] | None = None,
    extra_args: Sequence[str] = (),
    startup_timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """Run the mock in a child process on a free loopback port; returns (process, base URL).
    ``env`` is the child's whole environment (default: this process's), e.g. with the
    variable that ``--api-key-env`` names."""
    cmd = [sys.executable, "-m", "lecode.mock", "--port", "0", "--latency", str(latency)]
    for path in case_files:
        cmd += ["--data", str(path)]
    for kind, rate in (faults or {}).items():
        cmd += ["--fault", f"{kind}={rate}"]
    cmd += list(extra_args)
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ if env is None else env),
    )
    deadline = time.monotonic() + startup_timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("MOCK_URL="):
            return proc, line.strip().split("=", 1)[1]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    raise RuntimeError(f"mock server did not start: {err[-2000:]}")
