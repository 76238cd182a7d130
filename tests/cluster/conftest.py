"""Fixtures of the cluster tests (``make test-cluster``): a running SLURM cluster (one node,
``scripts/slurm_local.sh``), the executor plugins and the S3 tools in the project's venv.

Outside ``make test-cluster`` a missing service skips these tests; under it
(``LECODE_CLUSTER_TESTS=1``) it fails them, naming what is missing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
VENV = BIN.parent
REQUIRED = os.environ.get("LECODE_CLUSTER_TESTS") == "1"
ACCOUNT = os.environ.get("LECODE_SLURM_ACCOUNT", "lecode")
PARTITION = os.environ.get("LECODE_SLURM_PARTITION", "debug")
# A run of the sample DAG on the one-node cluster, with the plugin polling quickly.
FAST_POLL = ("--slurm-init-seconds-before-status-checks", "1")


def unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


def cmd(*args: str, timeout: int = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, (
            f"{' '.join(args)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def environ(project: Path, **extra: str) -> dict[str, str]:
    """The jobs' environment: the project copy's own package first, the venv's tools on PATH
    (sbatch --export=ALL hands both to every SLURM job)."""
    env = {k: v for k, v in os.environ.items() if k != "LECODE_REPLAY"}
    env["PYTHONPATH"] = str(project / "workflow")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def slurm_snakemake(
    target: str,
    user_profile: Path,
    *configfiles: str,
    dry_run: bool = False,
    fast_poll: bool = False,
) -> list[str]:
    """Snakemake making ``target`` on SLURM with the workflow's and the user's profile (the
    target first: ``--configfile`` takes several values and would swallow it)."""
    return [
        str(BIN / "snakemake"),
        target,
        *(["-n"] if dry_run else []),
        "--workflow-profile",
        "profiles/slurm",
        "--profile",
        str(user_profile),
        *(FAST_POLL if fast_poll else ()),
        "--configfile",
        *configfiles,
    ]


def run(
    cwd: Path, *args: str, env: Mapping[str, str], timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=dict(env)
    )
    assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
    return proc


@pytest.fixture(scope="session")
def slurm() -> str:
    """The running cluster's name (sinfo shows a usable node)."""
    for tool in ("sinfo", "sbatch", "sacct"):
        if shutil.which(tool) is None:
            unavailable(f"{tool} not found: start a cluster with scripts/slurm_local.sh start")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        unavailable("snakemake-executor-plugin-slurm is not installed: make cluster-env")
    state = cmd("sinfo", "-h", "-o", "%t", check=False)
    if state.returncode != 0 or not {"idle", "mix", "alloc"} & set(state.stdout.split()):
        unavailable(f"no usable SLURM node (sinfo: {state.stdout.strip()} {state.stderr.strip()})")
    conf = cmd("scontrol", "show", "config").stdout
    name = next(
        (
            line.split("=", 1)[1].strip()
            for line in conf.splitlines()
            if line.startswith("ClusterName")
        ),
        "",
    )
    return name


@pytest.fixture(scope="session")
def user_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's own profile: what docs/clusters.md tells a newcomer to write."""
    path = tmp_path_factory.mktemp("user-profile")
    (path / "config.yaml").write_text(
        f"default-resources:\n  slurm_account: {ACCOUNT}\n  slurm_partition: {PARTITION}\n",
        encoding="utf-8",
    )
    return path


def sacct_jobs(run_id: str) -> list[dict[str, str]]:
    """The SLURM jobs of one Snakemake run (the plugin names every job after the run's id)."""
    fields = ("JobIDRaw", "JobName", "State", "ExitCode", "Comment", "WorkDir", "AllocTRES")
    out = cmd(
        "sacct",
        "-X",
        "--parsable2",
        "--noheader",
        "--starttime",
        "now-1days",
        "--name",
        run_id,
        "--format=" + ",".join(fields),
    ).stdout
    return [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines() if line]


def slurm_run_id(output: str) -> str:
    for line in output.splitlines():
        if "SLURM run ID:" in line:
            return line.split("SLURM run ID:", 1)[1].strip()
    raise AssertionError(f"no 'SLURM run ID' in the output:\n{output[-3000:]}")
