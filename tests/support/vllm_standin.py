"""A stand-in for ``vllm serve`` (tests and CI): accepts vLLM's command line, serves the mock
endpoint on the given loopback port with the served model name and LoRA names listed by
``/v1/models`` (unknown model ids get 404). Cases come from ``LECODE_MOCK_DATA``
(os.pathsep-separated JSONL paths). ``LECODE_STANDIN_DELAY`` delays start-up (seconds).

Run it by path, from any working directory, as the command that replaces ``vllm serve``::

    LECODE_VLLM_COMMAND="python /path/to/repo/tests/support/vllm_standin.py"

It imports only the installed ``lecode`` package (:data:`COMMAND` is that command line for
this interpreter)."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Sequence

from lecode.mock.server import MockServer

COMMAND = shlex.join([sys.executable, os.path.abspath(__file__)])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="vllm-standin")
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--served-model-name", required=True)
    p.add_argument("--enable-lora", action="store_true")
    p.add_argument("--lora-modules", nargs="*", default=[])
    args, _unknown = p.parse_known_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("stand-in serves loopback only", file=sys.stderr)
        return 2
    time.sleep(float(os.environ.get("LECODE_STANDIN_DELAY", "0")))
    loras = [m.split("=", 1)[0] for m in args.lora_modules] if args.enable_lora else []
    data = [p for p in os.environ.get("LECODE_MOCK_DATA", "").split(os.pathsep) if p]
    server = MockServer(
        case_files=data,
        port=args.port,
        served_models=[args.served_model_name, *loras],
        strict_models=True,
    )
    server.start()
    print(f"stand-in serving {args.model} as {args.served_model_name} on {server.url}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
