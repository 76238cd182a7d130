"""The fixed cost of every job: the imports of each step, before and after a change.

A Snakemake job of step S runs ``workflow/scripts/S.py``, which imports ``lecode.specs``,
``lecode.joblog`` and ``lecode.<study>.steps.S``; ``run()`` then imports more on its path (the LLM
roles' modules through the role builders, the response store and endpoint, polars where a
score file is written). For each step this script imports that list in a fresh interpreter
(wall seconds from the first import to the last, interpreter start excluded), in the working
tree ("after") and in the tree of ``--before`` ("before", extracted with ``git archive``
into a temporary directory and put first on ``PYTHONPATH``; same interpreter and packages).
Runs alternate before/after, ``--repeat`` times each; the best of each is kept.

    .venv/bin/python benchmarks/import_cost.py [--before COMMIT] [--repeat 5] [--steps a,b]

Per step: before and after seconds, and which heavy packages the imports load in each tree.
The last line is ``ratio=<sum after / sum before>`` over the steps of the main DAG
(``MAIN``), each counted once (goal: as small as possible; a step of the main DAG runs once
per shard or per system, thousands of times in a large run). BERTScore's model code (torch,
bert-score, transformers), which a scoring job with BERTScore on needs to do its work, is
printed on its own line and not in the sum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The commit before the import work of "Scale out" (openai, polars, httpx, yaml made lazy).
BASELINE = "6028b5c"

BASE = ["lecode.specs", "lecode.joblog"]
#: What each job imports: its script's imports, then what run() imports on its usual path.
#: LLM roles (simulate, match_facts, judge_advice): the builders' lazy imports of the LLM role
#: modules and of the runtime (roles.role_context).
JOB_IMPORTS: dict[str, list[str]] = {
    "shard_dataset": ["lecode.evaluation.steps.shard_dataset"],
    "simulate": [
        "lecode.evaluation.steps.simulate",
        "lecode.agents.llm_expert",
        "lecode.agents.llm_client_sim",
        "lecode.llm.runtime",
    ],
    "match_facts": [
        "lecode.evaluation.steps.match_facts",
        "lecode.agents.llm_matcher",
        "lecode.llm.runtime",
    ],
    "judge_advice": [
        "lecode.evaluation.steps.judge_advice",
        "lecode.agents.llm_judge",
        "lecode.llm.runtime",
    ],
    # BERTScore off; write_scores imports polars
    "score_system": [
        "lecode.evaluation.steps.score_system",
        "lecode.metrics.advice",
        "lecode.evaluation.scoring",
        "polars",
    ],
    "aggregate_scores": ["lecode.evaluation.steps.aggregate_scores"],
    "tables": [
        "lecode.report.steps.tables",
        "lecode.audit",
        "lecode.report.provenance",
        "lecode.report.outputs",
        "lecode.report.document",
        "lecode.report.noise",
    ],
    "figures": ["lecode.report.steps.figures", "lecode.report.figures"],
    "html_report": ["lecode.report.steps.html_report", "lecode.report.html"],
}
MAIN = list(JOB_IMPORTS)
#: The steps that run once per shard and system: most of a large run's jobs.
PER_SHARD = ["simulate", "match_facts", "judge_advice"]
BERTSCORE = ["torch", "bert_score", "transformers"]
HEAVY = [
    "torch",
    "bert_score",
    "transformers",
    "matplotlib",
    "openai",
    "polars",
    "numpy",
    "bm25s",
    "jieba",
    "rouge_score",
    "httpx",
    "httpx2",
    "aiohttp",
    "yaml",
]

CHILD = r"""
import importlib, json, sys, time
mods = json.loads(sys.argv[1])
t = time.perf_counter()
for m in mods:
    importlib.import_module(m)
dt = time.perf_counter() - t
heavy = json.loads(sys.argv[2])
lecode = sys.modules.get("lecode")
print(json.dumps({"s": dt, "heavy": [h for h in heavy if h in sys.modules],
                  "lecode": getattr(lecode, "__file__", "")}))
"""


def measure(tree: Path, modules: list[str]) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(tree / "workflow"))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(modules), json.dumps(HEAVY)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    result = json.loads(out.stdout)
    if result["lecode"] and not str(result["lecode"]).startswith(str(tree / "workflow")):
        raise SystemExit(f"imported lecode from {result['lecode']}, not from {tree}")
    return result


def extract(commit: str, dest: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit, "workflow"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", default=BASELINE, help=f"commit to compare with ({BASELINE})")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--steps", default=",".join(MAIN), help="comma-separated steps")
    args = p.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]

    with tempfile.TemporaryDirectory(prefix="lecode-import-before-") as tmp:
        before_tree = Path(tmp)
        extract(args.before, before_tree)
        trees = {"before": before_tree, "after": REPO}
        jobs = {s: BASE + JOB_IMPORTS[s] for s in steps}
        jobs["(bertscore model code)"] = BERTSCORE
        for tree in trees.values():  # untimed: compile the trees' bytecode
            for mods in jobs.values():
                measure(tree, mods)
        best: dict[tuple[str, str], dict[str, object]] = {}
        for _ in range(args.repeat):
            for name, mods in jobs.items():
                for side, tree in trees.items():
                    r = measure(tree, mods)
                    old = best.get((name, side))
                    if old is None or ("s" in r and r["s"] < old.get("s", 1e9)):  # type: ignore[operator]
                        best[(name, side)] = r

    print(f"before={args.before} after=working tree  (best of {args.repeat}, seconds)")
    print(f"{'step':24s} {'before':>7s} {'after':>7s}  heavy packages before -> after")
    total = {"before": 0.0, "after": 0.0}
    for name in jobs:
        b, a = best[(name, "before")], best[(name, "after")]
        if "error" in b or "error" in a:
            print(f"{name:24s} {'n/a':>7s} {'n/a':>7s}  {b.get('error') or a.get('error')}")
            continue
        bs, as_ = float(b["s"]), float(a["s"])  # type: ignore[arg-type]
        heavy = f"{','.join(b['heavy']) or '-'} -> {','.join(a['heavy']) or '-'}"  # type: ignore[arg-type]
        print(f"{name:24s} {bs:7.3f} {as_:7.3f}  {heavy}")
        if name in MAIN:
            total["before"] += bs
            total["after"] += as_
    shard = [n for n in PER_SHARD if n in jobs]
    if shard:
        sb = sum(float(best[(n, "before")].get("s", 0.0)) for n in shard)  # type: ignore[arg-type]
        sa = sum(float(best[(n, "after")].get("s", 0.0)) for n in shard)  # type: ignore[arg-type]
        print(f"{'sum (per-shard steps)':24s} {sb:7.3f} {sa:7.3f}  ratio {sa / sb:.3f}")
    print(f"{'sum (main DAG steps)':24s} {total['before']:7.3f} {total['after']:7.3f}")
    print(f"ratio={total['after'] / total['before']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
