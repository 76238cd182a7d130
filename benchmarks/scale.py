"""The whole DAG at scale: N dialogues x 2 LLM experts in 64 shards against an endpoint with
latency, on the cores given; wall time, memory per job, and throughput against the endpoint.

For each size in ``--dialogues`` (comma-separated; default 10000): a temporary copy of the
project (as ``tests.conftest.copy_project`` makes it) with a test set of N cases, the sample
test set's cases replicated with new ids (``scale-00000``...) and their initial queries made
distinct (``（编号k）`` in front; otherwise every replica would send the same requests and
the response store would answer all but the first), and a configuration in which two LLM
experts (``zero_shot``, ``mediq``), the client, the matcher and the judge are one model entry
on the mock endpoint (``lecode.mock`` in a child process, ``--latency`` L seconds per call,
``--concurrency`` C calls in flight per job), ``--shards`` shards, BERTScore off, the
reliability study and the judge sentinel off. Then ``snakemake all_tables --cores K``.

Printed per size: wall time; calls the endpoint served; peak memory (``max_rss``, MB) per
rule from the Snakemake ``benchmark:`` files (max over the rule's jobs, and the median); the
job count and mean seconds per job; measured calls/s against the endpoint bound, which is
``min(K, api) x C / L``: K jobs at once (``--cores``; the ``api`` resource allows more) each
with at most C calls in flight; ``--status-every S`` also runs ``lecode status`` every S
seconds during the run and shows its last report (and how long it took).

    .venv/bin/python benchmarks/scale.py [--dialogues 10000] [--shards 64] [--latency 0.1]
        [--concurrency 16] [--cores 2] [--status-every 60] [--keep DIR]

The last lines are ``memory_ratio=<peak max_rss at the largest size / at the smallest>`` (per
rule, when two sizes ran; flat memory is about 1) and ``ratio=<calls per s / bound>`` of the
largest size.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from common import stop_process  # noqa: E402  (benchmarks/common.py: the script's own folder)

from lecode.mock import MockControl, spawn_mock  # noqa: E402
from tests.conftest import copy_project  # noqa: E402
from tests.support.mock_llm import KEY_ENV  # noqa: E402

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
LECODE = str(Path(sys.executable).with_name("lecode"))
SAMPLE = REPO / "data" / "sample" / "sample_testset.jsonl"
KEY = "sk-lecode-scale-0123456789abcdef"
RULES = {
    "shards": "shard_dataset",
    "transcripts": "simulate",
    "matches": "match_facts",
    "judgements": "judge_advice",
    "scores": "score_system",
    "aggregate": "aggregate_scores",
}


def replicated_cases(n: int) -> list[dict[str, Any]]:
    base = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines() if line.strip()]
    out = []
    for k in range(n):
        rec = dict(base[k % len(base)])
        rec["id"] = f"scale-{k:05d}"
        rec["initial_query"] = f"（编号{k}）{rec['initial_query']}"
        out.append(rec)
    return out


def config(url: str, test: str, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "dataset": {"test": test, "n_shards": args.shards, "limit": None},
        "models": {
            "mock": {
                "backend": "openai",
                "base_url": url,
                "model": "mock",
                "api_key_env": KEY_ENV,
                "temperature": 0.7,
                "seed": 7,
                "max_tokens": 256,
                "concurrency": args.concurrency,
                "timeout": 60,
                "max_retries": 6,
                "price": {"prompt": 0.001, "completion": 0.002},
            }
        },
        "experts": [
            {"model": "mock", "strategy": "zero_shot"},
            {"model": "mock", "strategy": "mediq"},
        ],
        "client": {"model": "mock", "strategy": "first_person_dialogue"},
        "matcher": {"model": "mock"},
        "judge": {"model": "mock"},
        "simulation": {"max_turns": args.max_turns},
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
        "reliability": {"enabled": False},
        "judge_sentinel": {"enabled": False},
    }


def status_report(project: Path, env: dict[str, str]) -> str:
    """What ``lecode status`` prints for the benchmark's configuration."""
    st = subprocess.run(
        [LECODE, "status", "--params", "params.yaml", "--params", "scale.yaml"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return st.stdout + st.stderr


def benchmarks(project: Path) -> dict[str, list[dict[str, float]]]:
    """The rows of every Snakemake benchmark file under results/, by rule."""
    out: dict[str, list[dict[str, float]]] = defaultdict(list)
    for path in sorted((project / "results" / "benchmarks").rglob("*.tsv")):
        kind = path.relative_to(project / "results" / "benchmarks").parts[0]
        with open(path, encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                vals = {}
                for k in ("s", "max_rss", "cpu_time"):
                    try:
                        vals[k] = float(row[k])
                    except (KeyError, ValueError):
                        vals[k] = float("nan")
                out[RULES.get(kind, kind)].append(vals)
    return out


def run_size(n: int, args: argparse.Namespace, keep: Path | None) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix=f"lecode-scale-{n}-"))
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "LECODE_REPLAY")}
    env[KEY_ENV] = KEY
    try:
        (tmp / "project").mkdir()
        project = copy_project(tmp / "project")
        test = project / "data" / "scale_testset.jsonl"
        cases = replicated_cases(n)
        test.write_text(
            "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
        )
        proc, url = spawn_mock(
            [test], latency=args.latency, extra_args=["--api-key-env", KEY_ENV], env=env
        )
        try:
            cfg = config(url, "data/scale_testset.jsonl", args)
            (project / "scale.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
            cmd = [SNAKEMAKE, "all_tables", "--cores", str(args.cores)]
            cmd += ["--configfile", "scale.yaml"]
            started = time.perf_counter()
            with open(tmp / "snakemake.log", "w", encoding="utf-8") as log:
                sm = subprocess.Popen(cmd, cwd=project, stdout=log, stderr=log, env=env)
                ended: list[float] = []  # when Snakemake exited (a status run may be going on)
                waiter = threading.Thread(
                    target=lambda: (sm.wait(), ended.append(time.perf_counter()))
                )
                waiter.start()
                last_status = ""
                status_s: list[float] = []
                next_status = started + (args.status_every or float("inf"))
                while sm.poll() is None:
                    time.sleep(0.2)
                    if time.perf_counter() >= next_status and sm.poll() is None:
                        t0 = time.perf_counter()
                        last_status = status_report(project, env)
                        status_s.append(time.perf_counter() - t0)
                        print(f"[{n}] {time.perf_counter() - started:.0f}s", flush=True)
                        print(last_status, flush=True)
                        next_status = time.perf_counter() + args.status_every
                waiter.join()
                seconds = ended[0] - started
            if sm.returncode != 0:
                tail = (tmp / "snakemake.log").read_text("utf-8")[-4000:]
                raise SystemExit(f"snakemake failed for {n} dialogues:\n{tail}")
            stats = MockControl(url).stats()
        finally:
            stop_process(proc)
        final_status = status_report(project, env)
        return {
            "dialogues": n,
            "seconds": seconds,
            "calls": stats["total_requests"],
            "max_inflight": stats["max_inflight"],
            "benchmarks": benchmarks(project),
            "status_seconds": status_s,
            "last_status": last_status,
            "final_status": final_status,
        }
    finally:
        if keep is not None:
            dest = keep / f"scale-{n}"
            shutil.rmtree(dest, ignore_errors=True)
            shutil.move(str(tmp), dest)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dialogues", default="10000", help="sizes, comma-separated (e.g. 1000,2000)")
    p.add_argument("--shards", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.1, help="seconds per call (L)")
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight per job (C)")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--api", type=int, default=8, help="the profile's api resource")
    p.add_argument("--max-turns", type=int, default=10)
    p.add_argument("--status-every", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--keep", type=Path, default=None, help="keep each project under DIR")
    args = p.parse_args(argv)
    sizes = [int(x) for x in args.dialogues.split(",") if x]
    bound = min(args.cores, args.api) * args.concurrency / args.latency

    results = []
    for n in sizes:
        r = run_size(n, args, args.keep)
        results.append(r)
        rate = r["calls"] / r["seconds"]
        print(
            f"dialogues={n} x 2 experts, shards={args.shards}, cores={args.cores}: "
            f"wall_s={r['seconds']:.1f} calls={r['calls']} max_inflight={r['max_inflight']} "
            f"calls_per_s={rate:.1f} bound={bound:.1f} ratio={rate / bound:.3f}"
        )
        for rule, rows in sorted(r["benchmarks"].items()):
            rss = [x["max_rss"] for x in rows]
            secs = [x["s"] for x in rows]
            print(
                f"  {rule:18s} jobs={len(rows):4d} max_rss_mb max={max(rss):8.1f} "
                f"median={statistics.median(rss):8.1f}  s/job mean={statistics.mean(secs):7.2f}"
            )
        if r["status_seconds"]:
            print(f"  lecode status during the run: {max(r['status_seconds']):.2f}s at most")
        print("  final `lecode status`:")
        print("    " + r["final_status"].strip().replace("\n", "\n    "))
    if len(results) > 1:
        small, large = results[0], results[-1]
        parts = []
        for rule in sorted(large["benchmarks"]):
            if rule in small["benchmarks"]:
                a = max(x["max_rss"] for x in small["benchmarks"][rule])
                b = max(x["max_rss"] for x in large["benchmarks"][rule])
                parts.append(f"{rule}={b / a:.2f}")
        print(
            f"memory_ratio ({large['dialogues']} vs {small['dialogues']} dialogues): "
            + " ".join(parts)
        )
    last = results[-1]
    print(f"ratio={last['calls'] / last['seconds'] / bound:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
