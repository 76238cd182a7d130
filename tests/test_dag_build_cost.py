"""The DAG build's work per job does not grow with the experiment: counted, never timed.

Two dry runs of the real workflow, on configurations of 2 experts x 2 shards and 4 experts x
6 shards (benchmarks/dag_build.py's project), with ``LECODE_HELPER_COUNTS`` set: the rule
helpers of ``workflow/rules/common.smk`` report how often Snakemake called each and how often
each computed its value. A per-job helper computes once per job, and the helper calls per job
are the same at both sizes (a helper that recomputed something per job over all jobs would
make that number grow).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # two dry runs of the real workflow (about 15 s)

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def dag_build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dag_build", REPO / "benchmarks/dag_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dry_run_counts(root: Path, experts: int, shards: int) -> tuple[dict[str, int], dict]:
    """(jobs per rule, helper counts) of ``snakemake -n all_tables`` on a fresh project."""
    dag_build_module().lecode_project(root, experts, shards)
    counts_file = root / "helper-counts.json"
    proc = subprocess.run(
        [SNAKEMAKE, "-n", "--cores", "1", "all_tables"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "LECODE_HELPER_COUNTS": str(counts_file)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = proc.stdout.split("Job stats:", 1)[1]
    jobs = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}
    return jobs, json.loads(counts_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def two_sizes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, int], dict]]:
    base = tmp_path_factory.mktemp("dag-cost")
    return [dry_run_counts(base / f"{e}x{s}", e, s) for e, s in ((2, 2), (4, 6))]


def test_each_per_job_helper_computes_once_per_job(
    two_sizes: list[tuple[dict[str, int], dict]],
) -> None:
    for jobs, counts in two_sizes:
        runs = counts["runs"]
        # one spec per simulation job, however many of the rule's functions ask for it
        assert runs["simulate_job"] == runs["simulate_spec"] == jobs["simulate"]
        assert runs["simulate_api"] == runs["simulate_runtime"] == jobs["simulate"]
        assert runs["match_facts_inputs"] == jobs["match_facts"]
        assert runs["score_system_inputs"] == jobs["score_system"]
        # Snakemake asks more than once per job; the helpers answer from what they computed
        assert counts["calls"]["simulate_job"] > runs["simulate_job"]


#: the per-job helpers of a step's rule: ``<step>_<what>`` (common.smk's step_rule)
HELPER_KINDS = ("_job", "_inputs", "_spec", "_api", "_runtime")
#: steps whose jobs are per system x shard or per system (the others have one job)
SCALED = ("simulate", "match_facts", "score_system", "reliability")


def rule_of(helper: str) -> str | None:
    step = next((helper.removesuffix(k) for k in HELPER_KINDS if helper.endswith(k)), None)
    return step if step in SCALED else None


def test_helper_calls_per_job_do_not_grow_with_experts_and_shards(
    two_sizes: list[tuple[dict[str, int], dict]],
) -> None:
    (small_jobs, small), (large_jobs, large) = two_sizes
    assert large_jobs["simulate"] == 6 * small_jobs["simulate"]  # the larger DAG is larger
    assert set(small["calls"]) == set(large["calls"])
    checked = 0
    for helper in small["calls"]:
        rule = rule_of(helper)
        if rule is None:
            continue
        per_job = [
            counts["calls"][helper] / jobs[rule]
            for jobs, counts in ((small_jobs, small), (large_jobs, large))
        ]
        # Snakemake calls each function of a job once or a fixed number of times; the same at
        # both sizes, exactly
        assert per_job[0] == per_job[1], (helper, per_job)
        assert per_job[0] <= 3, (helper, per_job)
        checked += 1
    assert checked >= 15
