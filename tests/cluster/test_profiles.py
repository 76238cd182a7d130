"""The cluster profiles and scripts, checked without a cluster (the first tests run in the
default tier; those marked ``cluster`` need the plugins of ``make cluster-env``)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.conftest import copy_project

REPO = Path(__file__).resolve().parents[2]
SLURM = REPO / "profiles" / "slurm"
# profiles/default keys that profiles/slurm leaves out on purpose (docs/clusters.md): the
# memory cap of one machine
DIFFERENT = {"resources"}


def profile(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_slurm_profile_keeps_the_default_profiles_runtime_settings() -> None:
    default = profile(REPO / "profiles" / "default" / "config.yaml")
    slurm = profile(SLURM / "config.yaml")
    for key, value in default.items():
        if key not in DIFFERENT:
            assert slurm.get(key) == value, key
    # the API cap stays, the memory cap goes
    api = [r for r in default["resources"] if r.startswith("api=")]
    assert slurm["resources"] == api
    assert slurm["executor"] == "slurm"
    assert slurm["no-hooks"] is True  # vLLM servers are never started on the submit host
    # account and partition come from the user's profile (a workflow profile's
    # default-resources or set-resources would replace the user's)
    assert "default-resources" not in slurm and "set-resources" not in slurm


def test_the_cluster_pins_agree() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"
    ]
    pinned = {p for name in ("cluster", "kubernetes", "s3", "cluster-test") for p in extras[name]}
    assert all("==" in p for p in pinned), pinned
    make = (REPO / "Makefile").read_text("utf-8")
    m = re.search(r"^CLUSTER_PKGS :=((?:.*\\\n)*.*)$", make, re.M)
    assert m, "CLUSTER_PKGS not found in the Makefile"
    assert set(m.group(1).replace("\\\n", " ").split()) == pinned


@pytest.mark.parametrize(
    "script", ["scripts/slurm_local.sh", "scripts/s3_local.sh", "profiles/slurm/vllm_job.sh"]
)
def test_scripts_are_valid_shell(script: str) -> None:
    proc = subprocess.run(["bash", "-n", str(REPO / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_vllm_job_asks_for_a_gpu_and_runs_the_local_executor() -> None:
    text = (SLURM / "vllm_job.sh").read_text("utf-8")
    assert re.search(r"^#SBATCH --gres=gpu:1$", text, re.M)
    assert "--workflow-profile profiles/default" in text  # hooks on, local executor


@pytest.mark.cluster
def test_every_rule_of_the_dag_declares_its_cluster_requests(tmp_path: Path) -> None:
    copy_project(tmp_path)
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("snakemake")),
            "all",
            "-n",
            "--workflow-profile",
            "profiles/slurm",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    blocks = re.findall(r"^(?:local)?rule (\w+):\n(.*?)(?=^\S|\Z)", out, re.M | re.S)
    seen = set()
    for rule, body in blocks:
        if rule in ("all",):
            continue
        res = re.search(r"resources: (.*)", body)
        assert res, (rule, body)
        for key in ("runtime=", "mem_mb=", "cpus_per_task="):
            assert key in res.group(1), (rule, res.group(1))
        seen.add(rule)
    assert {"simulate", "match_facts", "score_system", "tables", "figures", "html_report"} <= seen


@pytest.mark.cluster
def test_the_kubernetes_profile_names_only_known_options() -> None:
    """Not runnable here (no Kubernetes cluster): its keys parse as Snakemake options with
    the Kubernetes executor and S3 storage plugins installed."""
    pytest.importorskip("snakemake_executor_plugin_kubernetes")
    pytest.importorskip("snakemake_storage_plugin_s3")
    code = (
        "import sys; from snakemake.cli import get_argument_parser; "
        "p = get_argument_parser(profiles=[sys.argv[1]]); a = p.parse_args([]); "
        "print(a.executor, a.default_storage_provider, a.jobs)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "profiles" / "kubernetes")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[:2] == ["kubernetes", "s3"]
