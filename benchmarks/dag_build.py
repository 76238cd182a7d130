"""How long Snakemake takes to build lecode's DAG, against a trivial DAG of the same size.

Builds a copy of the project whose configuration has ``--experts`` offline experts and
``--shards`` shards, times ``snakemake -n all_tables`` on it, then times ``snakemake -n`` on a
generated Snakefile with the same number of jobs whose rules do nothing (same machine, same
run). Prints both times and ``ratio=`` lecode / trivial (goal <= 1.8).

    .venv/bin/python benchmarks/dag_build.py [--experts 20] [--shards 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
COPY = ("Snakefile", "params.yaml", "workflow", "profiles", "data")


def lecode_project(root: Path, experts: int, shards: int) -> None:
    root.mkdir(parents=True)
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(
                src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy2(src, root / name)
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["dataset"]["n_shards"] = shards
    agents = ("human_replay", "retrieval")
    params["models"].update(
        {f"expert{i:02d}": {"backend": "offline", "agent": agents[i % 2]} for i in range(experts)}
    )
    params["experts"] = [
        {"model": f"expert{i:02d}", "strategy": "baseline"} for i in range(experts)
    ]
    (root / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")


def trivial_project(root: Path, n_jobs: int) -> None:
    """``n_jobs`` jobs: one wildcard rule with n_jobs - 1 outputs and a target rule."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Snakefile").write_text(
        f"IDS = range({n_jobs - 1})\n\n"
        "rule all:\n    input: expand('out/{i}.txt', i=IDS)\n\n"
        "rule one:\n    output: 'out/{i}.txt'\n    shell: 'touch {output}'\n",
        encoding="utf-8",
    )


def dry_run(root: Path, *target: str) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [SNAKEMAKE, "-n", "--cores", "1", *target], cwd=root, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"snakemake -n failed in {root}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    m = re.search(r"^total\s+(\d+)", proc.stdout, re.M)
    return elapsed, int(m.group(1)) if m else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--experts", type=int, default=20)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3, help="best of N dry runs each")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lecode-dag-") as tmp:
        lec, triv = Path(tmp) / "lecode", Path(tmp) / "trivial"
        lecode_project(lec, args.experts, args.shards)
        runs = [dry_run(lec, "all_tables") for _ in range(args.repeat)]
        n_jobs = runs[0][1]
        trivial_project(triv, n_jobs)
        t_triv = min(dry_run(triv)[0] for _ in range(args.repeat))
        t_lec = min(t for t, _ in runs)
    print(f"experts={args.experts} shards={args.shards} jobs={n_jobs}")
    print(f"lecode_dry_run_s={t_lec:.2f} trivial_dry_run_s={t_triv:.2f}")
    print(f"ratio={t_lec / t_triv:.2f}")


if __name__ == "__main__":
    main()
