"""The endpoint speaks the OpenAI chat-completions protocol exactly as the ``openai`` SDK does.

The harness posts its requests with the HTTP library itself (``lecode.llm.endpoint``; the SDK's
request path cost about 0.8 ms of CPU per call, ``benchmarks/README.md``). The official SDK is
the reference here: the same request sent by both reaches a capturing server on loopback, and
the bodies, the protocol headers and the reading of the reply (text, usage, model, reasoning,
error statuses) must agree.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

from lecode.llm.errors import LLMCallError
from lecode.llm.retry import classify
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime

KEY = "sk-conformance-0123456789"
MESSAGES = [
    {"role": "system", "content": "你是一名律师，先提问再给建议。"},
    {"role": "user", "content": "我被公司辞退了，没有补偿，怎么办？"},
    {"role": "assistant", "content": "提问: 您在公司工作了多久？"},
    {"role": "user", "content": "三年多。"},
]
REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "served-model-2025",
    "system_fingerprint": "fp_abc",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {
                "role": "assistant",
                "content": "建议: 您可以申请劳动仲裁，要求经济补偿。",
                "reasoning_content": "先看工龄。",
            },
        }
    ],
    "usage": {
        "prompt_tokens": 57,
        "completion_tokens": 21,
        "total_tokens": 78,
        "completion_tokens_details": {"reasoning_tokens": 5},
    },
}
#: Headers of the protocol (not the client's own: User-Agent, X-Stainless-*, our X-Lecode-*).
PROTOCOL_HEADERS = ("authorization", "content-type", "openai-organization", "openai-project")


class Capture:
    """A loopback server that records each request and answers with a fixed reply."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200
        self.reply: bytes = json.dumps(REPLY, ensure_ascii=False).encode("utf-8")
        self.headers: dict[str, str] = {}
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                capture.requests.append((self.path, headers, body))
                self.send_response(capture.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(capture.reply)))
                for k, v in capture.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(capture.reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Capture]:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-lecode")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-lecode")
    cap = Capture()
    cap.thread.start()
    yield cap
    cap.server.shutdown()
    cap.server.server_close()


def ours(tmp_path: Path, url: str, *, json_mode: bool = False, **cfg: Any) -> Any:
    """One call through the harness's endpoint (a fresh store, so it reaches the network)."""
    rt = runtime(tmp_path / "store")
    endpoint = rt.endpoint("m", model_cfg(url, json_mode=json_mode, **cfg))

    async def go() -> Any:
        try:
            return await endpoint.complete(
                MESSAGES, role="expert", purpose="turn", template_hash="t", json_mode=json_mode
            )
        finally:
            await rt.aclose()

    return asyncio.run(go())


def sdk(url: str, **kwargs: Any) -> Any:
    """The same request through the official SDK (its retries off)."""
    client = openai.OpenAI(api_key=KEY, base_url=url, max_retries=0)
    try:
        return client.chat.completions.create(model="mock", messages=MESSAGES, **kwargs)  # type: ignore[arg-type]
    finally:
        client.close()


DECODING = {"temperature": 0.7, "top_p": 0.9, "max_tokens": 512, "seed": 7}


def test_request_body_and_headers_are_the_sdks(tmp_path: Path, capture: Capture) -> None:
    ours(tmp_path, capture.url)
    sdk(capture.url, **DECODING)
    (path_a, headers_a, body_a), (path_b, headers_b, body_b) = capture.requests
    assert path_a == path_b == "/v1/chat/completions"
    assert json.loads(body_a) == json.loads(body_b)
    assert json.loads(body_a)["messages"] == MESSAGES
    for name in PROTOCOL_HEADERS:
        assert headers_a.get(name) == headers_b.get(name), name
    assert headers_a["authorization"] == f"Bearer {KEY}"
    assert headers_a["openai-organization"] == "org-lecode"
    assert headers_a["openai-project"] == "proj-lecode"
    # the body is UTF-8 JSON and says so, as the SDK's does
    assert headers_a["content-type"].startswith("application/json")
    body_a.decode("utf-8")


def test_json_mode_sends_the_sdks_response_format(tmp_path: Path, capture: Capture) -> None:
    ours(tmp_path, capture.url, json_mode=True)
    sdk(capture.url, response_format={"type": "json_object"}, **DECODING)
    (_, _, body_a), (_, _, body_b) = capture.requests
    assert json.loads(body_a) == json.loads(body_b)
    assert json.loads(body_a)["response_format"] == {"type": "json_object"}


def test_reply_is_read_as_the_sdk_reads_it(tmp_path: Path, capture: Capture) -> None:
    got = ours(tmp_path, capture.url)
    ref = sdk(capture.url, **DECODING)
    assert got.text == ref.choices[0].message.content
    assert got.prompt_tokens == ref.usage.prompt_tokens
    assert got.completion_tokens == ref.usage.completion_tokens
    assert got.model == ref.model
    assert got.system_fingerprint == ref.system_fingerprint
    # extra fields of vLLM/DeepSeek-style replies: the SDK keeps them as extras
    assert got.reasoning == ref.choices[0].message.model_extra["reasoning_content"]
    assert got.reasoning_tokens == ref.usage.completion_tokens_details.reasoning_tokens


@pytest.mark.parametrize(
    ("status", "sdk_error", "kind"),
    [
        (429, openai.RateLimitError, "rate_limit"),
        (503, openai.InternalServerError, "server"),
        (400, openai.BadRequestError, "client_error"),
        (401, openai.AuthenticationError, "client_error"),
    ],
)
def test_error_statuses_are_classified_as_the_sdk_raises_them(
    tmp_path: Path, capture: Capture, status: int, sdk_error: type[Exception], kind: str
) -> None:
    capture.status = status
    capture.headers = {"Retry-After": "3"}
    capture.reply = json.dumps({"error": {"message": "服务繁忙", "type": "x"}}).encode()
    with pytest.raises(LLMCallError) as ours_err:
        ours(tmp_path, capture.url, max_retries=0)
    with pytest.raises(sdk_error) as sdk_err:
        sdk(capture.url, **DECODING)
    assert ours_err.value.kind == kind
    assert ours_err.value.status == status == sdk_err.value.status_code
    # the SDK's exception, classified by the same rules, lands in the same class
    failure = classify(sdk_err.value)
    assert failure.kind == kind
    assert "服务繁忙" in str(ours_err.value) and "服务繁忙" in failure.detail
    if kind == "rate_limit":
        assert failure.retry_after == 3.0
