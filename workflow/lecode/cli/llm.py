"""Subcommands of the LLM layer for the ``lecode`` command line.

``lecode mock-server``  run the mock OpenAI-compatible endpoint (loopback)
``lecode forecast``     dry run: calls, tokens and cost of a params file, before spending
``lecode serve start``  start ``vllm serve`` for every vLLM entry the params use (by hand; a
                        workflow run starts them on demand, :mod:`lecode.llm.vllm`)
``lecode serve stop``   stop them (the Snakefile's onsuccess / onerror hooks do the same)
``lecode serve status`` list running servers
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lecode.llm.errors import LLMConfigError

if TYPE_CHECKING:
    from lecode.config.experiment import Settings
    from lecode.config.sections import LLMSettings
from lecode.mock import cli as mock_cli


def _load_settings(paths: Sequence[str]) -> Settings:
    """The merged configuration files, validated by the typed settings (defaults filled)."""
    from lecode.config.experiment import Settings

    return Settings.load(paths[0], *paths[1:])


def serve_start(
    settings: Settings, *, log_dir: str | Path = "logs/vllm", timeout: float = 900.0
) -> list[str]:
    """Start (or reuse) a vLLM server for every vLLM entry the experiment uses; returns
    ``name base_url`` lines. Nothing is started in replay mode. On any failure every server is
    stopped again and :class:`LLMConfigError` (or the failure) propagates. ``lecode serve
    start`` calls it; a workflow run starts each server when a job first needs it instead
    (:func:`lecode.llm.vllm.ensure_base_url`), and reuses one started here."""
    from lecode.llm import vllm

    if settings.replay():
        return []
    servers_dir = settings.llm.servers_path
    lines = []
    try:
        for spec in vllm.specs_to_serve(settings.models, settings.role_models()):
            state = vllm.start_server(spec, servers_dir, log_dir=log_dir, health_timeout=timeout)
            lines.append(f"{spec.name} {state.base_url} ({', '.join(state.served_models)})")
    except BaseException:
        vllm.stop_all(servers_dir)
        raise
    return lines


def serve_stop_report(llm: LLMSettings) -> list[str]:
    """Stop every server recorded under ``llm``'s servers directory; returns ``name base_url
    (served models) stopped`` lines (the Snakefile's ``onsuccess``/``onerror`` hooks print
    them)."""
    from lecode.llm import vllm

    servers_dir = llm.servers_path
    states = {}
    for path in sorted(servers_dir.glob("*.json")) if servers_dir.is_dir() else []:
        try:
            states[path.stem] = vllm.ServerState.read(path)
        except (OSError, ValueError, KeyError):
            continue
    lines = []
    for name in vllm.stop_all(servers_dir):
        state = states.get(name)
        where = f" {state.base_url} ({', '.join(state.served_models)})" if state else ""
        lines.append(f"{name}{where} stopped")
    return lines


def cmd_forecast(args: argparse.Namespace) -> int:
    from lecode.config.experiment import Settings
    from lecode.forecast import forecast

    settings = Settings.load(args.params[0], *args.params[1:])
    if not 0.0 <= args.cached_share <= 1.0:
        print(
            f"lecode forecast: --cached-share {args.cached_share}: not in [0, 1]", file=sys.stderr
        )
        return 2
    fc = forecast(
        settings,
        questions=args.questions,
        tokens_per_char=args.tokens_per_char,
        cases=args.cases,
        cached_share=args.cached_share,
    )
    if args.json:
        out = {"cases": fc.cases, "rows": fc.rows(), "not_run": fc.not_run}
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(fc.render())
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from lecode.llm import vllm

    settings = _load_settings(args.params)
    if args.servers_dir:
        llm = settings.llm.model_copy(update={"servers_dir": args.servers_dir})
        settings = settings.model_copy(update={"llm": llm})
    servers_dir = settings.llm.servers_path
    if args.action == "stop":
        for name in vllm.stop_all(servers_dir):
            print(f"stopped vLLM server {name}")
        return 0
    if args.action == "status":
        for path in sorted(servers_dir.glob("*.json")) if servers_dir.is_dir() else []:
            state = vllm.ServerState.read(path)
            print(
                f"{state.name}\t{state.base_url}\tpid {state.pid}\t{','.join(state.served_models)}"
            )
        return 0
    if settings.replay():
        print("replay mode: no vLLM server is started")
        return 0
    try:
        for line in serve_start(settings, log_dir=args.log_dir, timeout=args.timeout):
            print(f"vLLM server {line}")
    except LLMConfigError as exc:
        print(f"lecode serve start: {exc}", file=sys.stderr)
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add ``mock-server``, ``forecast`` and ``serve`` to the ``lecode`` command line.
    Each sets ``func`` (``args.func(args) -> int``)."""
    p = subparsers.add_parser(
        "mock-server", help="deterministic OpenAI-compatible mock endpoint (loopback) for tests"
    )
    mock_cli.add_arguments(p)
    p.set_defaults(func=mock_cli.run)

    p = subparsers.add_parser(
        "forecast", help="dry run: LLM calls, tokens and cost of a configuration"
    )
    p.add_argument(
        "--params",
        action="append",
        default=None,
        help="params file(s), later ones merged over earlier (default params.yaml)",
    )
    p.add_argument(
        "--questions",
        type=int,
        default=None,
        help="questions per dialogue (default: simulation.max_turns, the bound)",
    )
    p.add_argument("--tokens-per-char", type=float, default=0.75)
    p.add_argument(
        "--cached-share",
        type=float,
        default=0.0,
        help="share of prompt tokens assumed read from the provider's prompt cache for models "
        "whose stored responses never reported cached tokens (default 0; measured otherwise)",
    )
    p.add_argument(
        "--cases",
        type=int,
        default=None,
        help="forecast this many dialogues, drawn in turn from the configured test set "
        "(e.g. 740 for LeCoDe's test set while only the sample is at hand)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda a: cmd_forecast(_with_default_params(a)))

    p = subparsers.add_parser("serve", help="start/stop vLLM servers for vLLM model entries")
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--params", action="append", default=None)
    p.add_argument("--servers-dir", default=None, help="state files (default: store/servers)")
    p.add_argument("--log-dir", default="logs/vllm")
    p.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds to wait for a server to become healthy",
    )
    p.set_defaults(func=lambda a: cmd_serve(_with_default_params(a)))


def _with_default_params(args: argparse.Namespace) -> argparse.Namespace:
    if not args.params:
        args.params = ["params.yaml"]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lecode-llm")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
