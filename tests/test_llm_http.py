"""The endpoint's HTTP layer (:mod:`lecode.llm.http`) over real loopback sockets: proxies from
the environment, failures of the connection classified for retry, sessions closed with their
event loop."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode.llm import endpoint as endpoint_module
from lecode.llm import http
from lecode.llm.errors import LLMCallError
from lecode.llm.http import proxy_for
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime

MESSAGES = [{"role": "system", "content": "你是律师。"}, {"role": "user", "content": "你好"}]
REPLY = {
    "model": "m",
    "choices": [{"message": {"role": "assistant", "content": "建议: 申请仲裁。"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4},
}
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def only_proxy_vars(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """The process environment with these proxy variables and no others."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


# -- proxy_for: the environment's proxy for a URL, read as urllib/httpx read it ---------------
@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({}, "https://api.example.com/v1", None),
        ({"HTTPS_PROXY": "http://p:3128"}, "https://api.example.com/v1", "http://p:3128"),
        # the scheme's own variable only
        ({"HTTPS_PROXY": "http://p:3128"}, "http://api.example.com/v1", None),
        ({"ALL_PROXY": "http://all:1"}, "http://api.example.com/v1", "http://all:1"),
        ({"HTTP_PROXY": "http://h:1", "ALL_PROXY": "http://all:1"}, "http://x/v1", "http://h:1"),
        # lower case wins over upper case, whatever the order
        (
            {"HTTP_PROXY": "http://upper:1", "http_proxy": "http://lower:2"},
            "http://x/",
            "http://lower:2",
        ),
        (
            {"http_proxy": "http://lower:2", "HTTP_PROXY": "http://upper:1"},
            "http://x/",
            "http://lower:2",
        ),
        # an empty variable names no proxy
        ({"HTTP_PROXY": ""}, "http://x/", None),
        # a bare host:port is an HTTP proxy
        ({"HTTP_PROXY": "proxy.local:8080"}, "http://x/", "http://proxy.local:8080"),
        # NO_PROXY: hosts, domain suffixes, *
        (
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "127.0.0.1,localhost"},
            "http://127.0.0.1:9/v1",
            None,
        ),
        ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "http://api.example.com/", None),
        (
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "example.com"},
            "http://example.org/",
            "http://p:1",
        ),
        ({"HTTP_PROXY": "http://p:1", "no_proxy": "*"}, "http://anything/", None),
    ],
)
def test_proxy_for_reads_the_environment(
    env: dict[str, str], url: str, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_proxy_vars(monkeypatch, env)
    assert proxy_for(url) == expected


def test_proxy_for_refuses_a_proxy_it_cannot_use(monkeypatch: pytest.MonkeyPatch) -> None:
    only_proxy_vars(monkeypatch, {"HTTPS_PROXY": "socks5://p:1080"})
    with pytest.raises(ValueError, match=r"socks5://p:1080.*only http:// and https://"):
        proxy_for("https://api.example.com/v1")


# -- a loopback server whose answer each test chooses ----------------------------------------
class RawServer:
    """Accepts connections on 127.0.0.1 and hands each one, with the request head and body
    read, to ``answer(conn, head, body)``; over TLS when given a server context."""

    def __init__(
        self,
        answer: Callable[[socket.socket, bytes, bytes], None],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.answer = answer
        self.tls = tls
        self.heads: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        if self.tls is not None:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError):  # the client refused our certificate
                conn.close()
                return
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, body = data.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                body += conn.recv(65536)
            self.heads.append(head)
            self.answer(conn, head, body)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., RawServer]]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    only_proxy_vars(monkeypatch, {})
    servers: list[RawServer] = []

    def start(
        answer: Callable[[socket.socket, bytes, bytes], None], tls: ssl.SSLContext | None = None
    ) -> RawServer:
        servers.append(RawServer(answer, tls))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def complete_reply(conn: socket.socket, head: bytes, body: bytes) -> None:
    payload = json.dumps(REPLY, ensure_ascii=False).encode()
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )


def call(tmp_path: Path, url: str, **cfg: Any) -> Any:
    rt = runtime(tmp_path / "store")
    endpoint = rt.endpoint("m", model_cfg(url, **cfg))

    async def go() -> Any:
        return await endpoint.complete(MESSAGES, role="expert", purpose="turn", template_hash="t")

    return asyncio.run(go())


def test_requests_go_through_the_environments_proxy(
    tmp_path: Path, serve: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = serve(complete_reply)
    monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
    got = call(tmp_path, "http://llm.invalid/v1")
    assert got.text == "建议: 申请仲裁。"
    # a proxy is sent the absolute URL
    assert proxy.heads[0].startswith(b"POST http://llm.invalid/v1/chat/completions HTTP/1.1")


def test_no_proxy_reaches_the_endpoint_directly(
    tmp_path: Path, serve: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(complete_reply)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert call(tmp_path, server.url).text == "建议: 申请仲裁。"
    assert server.heads[0].startswith(b"POST /v1/chat/completions HTTP/1.1")


def self_signed(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a fresh self-signed certificate for 127.0.0.1, and its PEM."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lecode test endpoint")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "endpoint.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file = tmp_path / "endpoint.key"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pem, key_file)
    return server, pem


def test_https_verifies_against_ssl_cert_file(
    tmp_path: Path, serve: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    tls, pem = self_signed(tmp_path)
    server = serve(complete_reply, tls)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # the certificate is in no bundle: refused, and said so
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(LLMCallError) as err:
        call(tmp_path / "a", server.url, max_retries=3)
    assert err.value.kind == "connection" and "certificate verify failed" in str(err.value)
    assert "SSL_CERT_FILE" in str(err.value)
    assert err.value.attempts == 1  # no retry can fix it
    # trusted through SSL_CERT_FILE, as httpx and the openai SDK read it
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    assert call(tmp_path / "b", server.url).text == "建议: 申请仲裁。"


def test_ssl_context_without_variables_uses_certifis_bundle() -> None:
    import certifi

    bundle = ssl.create_default_context(cafile=certifi.where()).cert_store_stats()["x509_ca"]
    assert bundle > 50
    assert http.ssl_context({}).cert_store_stats()["x509_ca"] == bundle


def test_a_refused_connection_is_retried_then_reported(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on the port now
    with pytest.raises(LLMCallError) as err:
        call(tmp_path, f"http://127.0.0.1:{port}/v1", max_retries=2)
    assert err.value.kind == "connection"
    assert err.value.attempts == 3


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        # the connection closes in the middle of the body: retried as a connection failure
        (b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"choices": [', "connection"),
        # closed before any reply
        (b"", "connection"),
        # not HTTP at all
        (b"SSH-2.0-OpenSSH_9.6\r\n", "connection"),
        # a body that claims a compression it does not have
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!",
            "malformed",
        ),
    ],
)
def test_broken_replies_are_classified(
    tmp_path: Path,
    serve: Callable[..., RawServer],
    reply: bytes,
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = serve(lambda conn, head, body: conn.sendall(reply))
    with pytest.raises(LLMCallError) as err:
        call(tmp_path, server.url, max_retries=1)
    assert err.value.kind == kind
    assert len(server.heads) == 2  # the first attempt and one retry
    assert f"{kind} after 2 attempt(s)" in str(err.value)
    # the request's headers (the API key) appear in neither the error nor the log
    assert "sk-test" not in str(err.value) and "sk-test" not in caplog.text


def test_a_stalled_reply_times_out(tmp_path: Path, serve: Callable[..., RawServer]) -> None:
    stop = threading.Event()
    server = serve(lambda conn, head, body: stop.wait(10))
    try:
        with pytest.raises(LLMCallError) as err:
            call(tmp_path, server.url, max_retries=0, timeout=0.3)
    finally:
        stop.set()
    assert err.value.kind == "timeout"


def test_sessions_close_with_their_event_loop(
    tmp_path: Path, serve: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``asyncio.run`` gets its own session, closed when that loop ends (no connection
    outlives its loop)."""
    server = serve(complete_reply)
    sessions: list[http.ChatSession] = []

    class Recorded(http.ChatSession):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            sessions.append(self)

    monkeypatch.setattr(endpoint_module, "ChatSession", Recorded)
    rt = runtime(tmp_path / "store")
    endpoint = rt.endpoint("m", model_cfg(server.url))

    async def one(i: int) -> str:
        msgs = [*MESSAGES, {"role": "user", "content": str(i)}]
        got = await endpoint.complete(msgs, role="expert", purpose="turn", template_hash="t")
        return got.text

    assert [asyncio.run(one(i)) for i in range(3)] == ["建议: 申请仲裁。"] * 3
    assert len(sessions) == 3 and len(server.heads) == 3
    assert all(s.closed for s in sessions)


def test_a_url_that_cannot_be_requested_is_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aiohttp

    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    with pytest.raises(aiohttp.InvalidURL, match="chat/completions"):
        call(tmp_path, "http://exa mple.com:port/v1", max_retries=3)
