"""A scripted OpenAI-compatible server that answers one request at a time over loopback HTTP,
as a llama.cpp server on a CPU does: the others wait in the listen queue. A request whose
client has gone (it timed out) is dropped without being computed, as llama.cpp cancels the task
of a closed connection. Every request body that reaches it is counted."""

from __future__ import annotations

import hashlib
import json
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


class SerialServer:
    """``seconds(n)``: how long the ``n``-th computed request (0-based) takes."""

    def __init__(self, seconds: Callable[[int], float]) -> None:
        self.seconds = seconds
        self.sent: Counter[str] = Counter()  # body digest -> times it reached the server
        self.computed = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> SerialServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Server(HTTPServer):
    request_queue_size = 128  # the waiting requests queue here, as at a busy llama.cpp


def _client_gone(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _handler(server: SerialServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            digest = hashlib.sha256(raw).hexdigest()
            with server._lock:
                server.sent[digest] += 1
            if _client_gone(self.connection):
                server.dropped += 1
                return
            with server._lock:
                n = server.computed
                server.computed += 1
            end = time.monotonic() + server.seconds(n)
            while time.monotonic() < end:  # computing; a closed connection cancels it
                if _client_gone(self.connection):
                    server.dropped += 1
                    return
                time.sleep(0.005)
            body = json.dumps(
                {
                    "model": "serial",
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": f"建议: 第{n}个回答。"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                }
            ).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

    return Handler
