"""The ``lecode`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lecode import rerun_diff, selftest
from lecode.cli import llm as llm_cli
from lecode.config.base import ParamsFileError, SettingsError
from lecode.corpus import cli as corpus_cli
from lecode.dataset import DatasetError, load_cases, split_cases, to_lecode_json, validate_file
from lecode.recordio import atomic_write_text
from lecode.report import explain


def _cmd_validate(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        violations = validate_file(path)
        n = 0 if violations else len(load_cases(path))
        if not violations and n == 0:
            status = 1
            print(
                f"{path}: holds no consultations (an empty test set cannot be evaluated)",
                file=sys.stderr,
            )
        elif violations:
            status = 1
            for v in violations:
                print(v, file=sys.stderr)
            print(f"{path}: {len(violations)} problem(s)", file=sys.stderr)
        else:
            print(f"{path}: {n} consultations, valid")
    return status


def _cmd_split(args: argparse.Namespace) -> int:
    cases = [c for path in args.files for c in load_cases(path)]
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise SystemExit(f"duplicate ids across files: {dupes}")
    train, test = split_cases(cases, args.test_fraction)
    out = Path(args.out_dir)
    for name, part in (("trainset", train), ("testset", test)):
        path = out / f"{args.prefix}_{name}.jsonl"
        lines = (json.dumps(to_lecode_json(c), ensure_ascii=False) + "\n" for c in part)
        atomic_write_text(path, "".join(lines))
        print(f"{path}: {len(part)} consultations")
    return 0


def _cmd_retry_errors(args: argparse.Namespace) -> int:
    """Remove transcript shards holding failed dialogues, so the next run retries them.

    Finished dialogues of those shards come back from the dialogue journal without a single
    request; only the failed ones are simulated again (and everything downstream rescored).
    """
    from lecode.recordio import read_transcripts

    root = Path(args.results) / "transcripts"
    n_files = n_dialogues = 0
    for path in sorted(root.rglob("*.jsonl")) if root.is_dir() else []:
        failed = [t.case_id for t in read_transcripts(path) if t.stop_reason == "error"]
        if not failed:
            continue
        n_files += 1
        n_dialogues += len(failed)
        print(f"{path}: {len(failed)} failed dialogue(s): {', '.join(failed[:5])}")
        if not args.dry_run:
            path.unlink()
    verb = "would be retried" if args.dry_run else "will be retried by the next run"
    print(f"{n_dialogues} failed dialogue(s) in {n_files} shard(s) {verb}")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    """Write (or, with --check, compare) the JSON schema generated from the settings models."""
    from lecode.preflight import SCHEMA_PATH, json_schema

    text = json.dumps(json_schema(), ensure_ascii=False, indent=2) + "\n"
    target = Path(args.out) if args.out else SCHEMA_PATH
    if args.check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            print(f"{target} is out of date: run `lecode schema`", file=sys.stderr)
            return 1
        print(f"{target} is current")
        return 0
    atomic_write_text(target, text)
    print(f"wrote {target}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    """Everything the Snakefile checks before it schedules a job (the same functions: parsing
    and :func:`lecode.preflight.preflight`, API keys of every model a role uses included),
    without Snakemake."""
    from lecode.config.experiment import Settings
    from lecode.pipeline import Plan
    from lecode.preflight import preflight

    settings = Settings.load(args.params[0], *args.params[1:])
    preflight(settings, layers=args.params)
    plan = Plan(settings)
    for x in plan.evaluation.system_files:
        if x.not_run is not None:
            print(f"{x.system.label}: not run ({x.not_run})")
            continue
        print(f"{x.system.label}: simulate {x.simulate}, match {x.match}, score {x.score}")
    print(f"tables {plan.report.tables_spec.digest()}; configuration valid")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    """Per system: dialogues done/total, failures, spend against the forecast; running jobs."""
    import time

    from lecode.config.experiment import Settings
    from lecode.status import Reader, collect, render, system_forecasts

    settings = Settings.load(args.params[0], *args.params[1:])
    forecasts = system_forecasts(settings)  # once, also with --watch
    reader = Reader()
    shown = 0
    while True:
        report = render(collect(args.params, forecasts=forecasts, reader=reader))
        if args.watch:
            print(time.strftime("%Y-%m-%d %H:%M:%S"))
        print(report, flush=True)
        shown += 1
        if not args.watch or (args.times and shown >= args.times):
            return 0
        try:
            time.sleep(args.watch)
        except KeyboardInterrupt:
            return 0
        print()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lecode", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check LeCoDe JSONL files; every problem is listed")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser(
        "split", help="deterministic train/test split (by id hash) of one or more JSONL files"
    )
    p.add_argument("files", nargs="+")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--prefix", default="LeCoDe")
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.set_defaults(func=_cmd_split)

    p = sub.add_parser(
        "retry-errors",
        help="make the next run retry the dialogues that failed (API errors after retries)",
    )
    p.add_argument("--results", default="results")
    p.add_argument("--dry-run", action="store_true")
    p.set_defaults(func=_cmd_retry_errors)

    p = sub.add_parser("schema", help="write the params.yaml JSON schema from the settings")
    p.add_argument("--out", default=None)
    p.add_argument("--check", action="store_true", help="fail when the file is not current")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("check", help="check a configuration as the Snakefile does")
    p.add_argument("--params", action="append", default=None)
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser(
        "status",
        help="per system: dialogues done/total, failures, spend against the forecast, and "
        "the shard jobs running (also during a run)",
    )
    p.add_argument("--params", action="append", default=None)
    p.add_argument(
        "--watch", type=float, default=0.0, metavar="SECONDS", help="report again every SECONDS"
    )
    p.add_argument(
        "--times", type=int, default=0, help="with --watch: stop after this many reports"
    )
    p.set_defaults(func=_cmd_status)

    llm_cli.register(sub)
    explain.register(sub)
    selftest.register(sub)
    rerun_diff.register(sub)
    corpus_cli.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "params", "") is None:
        args.params = ["params.yaml"]
    try:
        return int(args.func(args) or 0)
    except DatasetError as exc:
        print(exc, file=sys.stderr)
        return 1
    except SettingsError as exc:  # a params file that cannot be read: usage error, exit 2
        print(f"lecode {args.command}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ParamsFileError) else 1


if __name__ == "__main__":
    sys.exit(main())
