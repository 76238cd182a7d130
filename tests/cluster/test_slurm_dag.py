"""The sample DAG on SLURM (snakemake-executor-plugin-slurm, profiles/slurm) gives the same
tables as a local run.

Two copies of the project with the tiny configuration of the workflow test: one runs with
the local executor, the other with ``--workflow-profile profiles/slurm`` and a user profile
holding account and partition. Both run at once (the cluster run mostly waits on sbatch and
sacct). Then: every job of the cluster run was a SLURM job that completed (``sacct``), under
its rule's requests, and every table (md, csv, tex) and ``metrics.json`` is byte-identical to
the local run's. The provenance JSON is not compared: it records the run (git state, hosts).
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.cluster.conftest import (
    BIN,
    environ,
    run,
    sacct_jobs,
    slurm_run_id,
    slurm_snakemake,
)
from tests.conftest import copy_project
from tests.test_workflow_integration import TINY

pytestmark = pytest.mark.cluster

COMPARED = (".md", ".csv", ".tex")
# The workflow test's tiny configuration in one shard: the same jobs per level, half as many
# jobs in flight on the test node.
CLUSTER_TINY = TINY.replace("n_shards: 2", "n_shards: 1")
assert CLUSTER_TINY != TINY
# Rules without a command: Snakemake finishes them itself, they are no SLURM job.
TARGET_RULES = {"all_tables", "all", "all_transcripts"}


def tiny_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    copy_project(dest)
    (dest / "tiny.yaml").write_text(CLUSTER_TINY, encoding="utf-8")
    return dest


def job_stats(output: str) -> dict[str, int]:
    """Jobs per rule from Snakemake's "Job stats" table."""
    counts = {}
    for line in output.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    counts.pop("total", None)
    return counts


@pytest.fixture(scope="module")
def runs(slurm: str, user_profile: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("slurm-dag")
    local, cluster = tiny_copy(base / "local"), tiny_copy(base / "cluster")
    snakemake = str(BIN / "snakemake")
    started = time.monotonic()
    # Targets first: --configfile takes several values and would swallow them.
    local_run = subprocess.Popen(
        [snakemake, "all_tables", "--cores", "2", "--configfile", "tiny.yaml"],
        cwd=local,
        env=environ(local),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        cluster_run = run(
            cluster,
            *slurm_snakemake("all_tables", user_profile, "tiny.yaml", fast_poll=True),
            env=environ(cluster),
        )
        cluster_s = time.monotonic() - started
        local_out, _ = local_run.communicate(timeout=600)
    finally:
        if local_run.poll() is None:
            local_run.kill()
    assert local_run.returncode == 0, local_out[-5000:]
    out = cluster_run.stdout + cluster_run.stderr
    print(f"cluster run: {cluster_s:.0f} s")
    return {
        "local": local,
        "cluster": cluster,
        "out": out,
        "run_id": slurm_run_id(out),
        "local_jobs": job_stats(local_out),
    }


def test_every_job_ran_as_a_completed_slurm_job(runs: dict, slurm: str) -> None:
    jobs = sacct_jobs(runs["run_id"])
    assert jobs, f"sacct knows no job of run {runs['run_id']}"
    rules = Counter(j["Comment"].removeprefix("rule_").split("_wildcards_")[0] for j in jobs)
    expected = {r: n for r, n in job_stats(runs["out"]).items() if r not in TARGET_RULES}
    assert {"shard_dataset", "simulate", "match_facts", "score_system", "tables"} <= set(expected)
    assert dict(rules) == expected, jobs
    # the local run ran the same jobs
    assert {r: n for r, n in runs["local_jobs"].items() if r not in TARGET_RULES} == expected
    assert {j["State"] for j in jobs} == {"COMPLETED"}, jobs
    assert {j["ExitCode"] for j in jobs} == {"0:0"}, jobs
    assert {Path(j["WorkDir"]).resolve() for j in jobs} == {runs["cluster"].resolve()}
    # and the cluster run's log says so for each of them
    assert runs["out"].count("has been submitted with SLURM jobid") == len(jobs)


def test_jobs_carry_their_rules_requests(runs: dict) -> None:
    """The sbatch requests come from the rules (runtime, mem_mb, cpus_per_task) and the user
    profile (account, partition); sacct shows what SLURM granted."""
    out = subprocess.run(
        [
            "sacct",
            "-X",
            "--parsable2",
            "--noheader",
            "--name",
            runs["run_id"],
            "--starttime",
            "now-1days",
            "--format=Comment,Timelimit,ReqMem,AllocCPUS,Account,Partition",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {}
    for line in out.splitlines():
        comment, limit, mem, cpus, account, partition = line.split("|")
        rule = comment.removeprefix("rule_").split("_wildcards_")[0]
        rows[rule] = (limit, mem, cpus, account, partition)
    from tests.cluster.conftest import ACCOUNT, PARTITION

    assert rows["simulate"][:3] == ("00:30:00", "2000M", "1")  # offline experts: 30 min
    assert rows["publish_tables"][:3] == ("00:05:00", "500M", "1")
    assert rows["tables"][2] == "2"  # threads: 2
    assert {r[3] for r in rows.values()} == {ACCOUNT}
    assert {r[4] for r in rows.values()} == {PARTITION}


def test_tables_are_identical_to_a_local_run(runs: dict) -> None:
    local, cluster = runs["local"], runs["cluster"]
    want = sorted(
        p.relative_to(local).as_posix()
        for p in (local / "reports").rglob("*")
        if p.suffix in COMPARED or p.name == "metrics.json"
    )
    assert "reports/tables/table3.md" in want and "reports/metrics.json" in want
    got = sorted(
        p.relative_to(cluster).as_posix()
        for p in (cluster / "reports").rglob("*")
        if p.suffix in COMPARED or p.name == "metrics.json"
    )
    assert got == want
    differ = [f for f in want if (local / f).read_bytes() != (cluster / f).read_bytes()]
    assert not differ, differ
    # the same job specs, so the same result paths
    results = lambda root: sorted(  # noqa: E731
        p.relative_to(root).as_posix() for p in (root / "results").rglob("*.*")
    )
    assert results(cluster) == results(local)


def test_a_second_cluster_run_has_nothing_to_do(runs: dict, user_profile: Path) -> None:
    proc = run(
        runs["cluster"],
        *slurm_snakemake("all_tables", user_profile, "tiny.yaml", dry_run=True),
        env=environ(runs["cluster"]),
    )
    assert "Nothing to be done" in proc.stdout + proc.stderr
