"""Command line of the mock endpoint (also ``lecode mock-server``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lecode.mock.faults import CONTENT_FAULTS, HTTP_FAULTS
from lecode.mock.server import USAGE_SHAPES, MockServer, ProviderShape


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=0, help="loopback port (0: any free port)")
    p.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="JSONL",
        help="case file(s) the mock plays from (LeCoDe JSONL or shard files)",
    )
    p.add_argument(
        "--latency",
        type=float,
        default=0.0,
        help="seconds every reply takes (from the request, processing included)",
    )
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND=RATE",
        help=f"fault rate; kinds: {', '.join(HTTP_FAULTS + CONTENT_FAULTS)}",
    )
    p.add_argument(
        "--fault-role",
        action="append",
        default=[],
        metavar="ROLE",
        help="inject HTTP faults only into requests of this role (repeatable)",
    )
    p.add_argument(
        "--fault-match",
        default=None,
        metavar="TEXT",
        help="inject HTTP faults only into requests whose messages contain TEXT",
    )
    p.add_argument("--slow-seconds", type=float, default=3.0, help="delay of a 'timeout' fault")
    p.add_argument(
        "--served-model",
        action="append",
        default=[],
        help="model id listed by /v1/models (default: mock)",
    )
    p.add_argument("--strict-models", action="store_true", help="answer 404 for models not listed")
    p.add_argument(
        "--api-key-env", default=None, help="require the key held by this environment variable"
    )
    p.add_argument(
        "--cache-usage",
        choices=USAGE_SHAPES,
        default="openai",
        help="how replies report cached prompt tokens (openai/DashScope or DeepSeek fields)",
    )
    p.add_argument(
        "--answer-model",
        action="append",
        default=[],
        metavar="REQUESTED=ANSWERED",
        help="name ANSWERED as the model in replies to requests for REQUESTED (an alias)",
    )
    p.add_argument(
        "--fingerprint-change-after",
        type=int,
        default=None,
        metavar="N",
        help="change the system_fingerprint after N replies",
    )


def run(args: argparse.Namespace) -> int:
    import os

    faults = {}
    for item in args.fault:
        kind, _, rate = item.partition("=")
        faults[kind.strip()] = float(rate)
    server = MockServer(
        case_files=args.data,
        port=args.port,
        latency=args.latency,
        faults=faults,
        slow_seconds=args.slow_seconds,
        served_models=args.served_model or ["mock"],
        strict_models=args.strict_models,
        api_key=os.environ.get(args.api_key_env) if args.api_key_env else None,
        shape=ProviderShape(
            usage=args.cache_usage,
            answer_models=dict(item.split("=", 1) for item in args.answer_model),
            fingerprint_change_after=args.fingerprint_change_after,
        ),
    )
    if args.fault_role or args.fault_match:
        server.set_faults(
            faults,
            slow_seconds=args.slow_seconds,
            roles=args.fault_role or None,
            match=args.fault_match,
        )
    url = server.start()
    print(f"MOCK_URL={url}", flush=True)
    try:
        import threading

        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="lecode mock-server", description=__doc__)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
