"""The vLLM path on a cluster, without a GPU: profiles/slurm/vllm_job.sh as a SLURM job.

The one-node test cluster advertises a GPU slot with no device behind it, so the job script
is submitted exactly as docs/clusters.md says (its ``--gres=gpu:1`` included).
The stand-in server (tests/support/vllm_standin.py) plays ``vllm serve``. Checked: the job
completes with a GPU allocated, the workflow's hook served the vLLM expert on the node's
loopback and stopped it, its transcripts are there; then the cluster profile schedules no
simulation of that expert, and a cluster job that would need the server fails naming it
instead of starting one on the submit host.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import (
    ACCOUNT,
    PARTITION,
    REPO,
    VENV,
    cmd,
    environ,
    run,
    slurm_snakemake,
)
from tests.conftest import copy_project
from tests.support.vllm_standin import COMMAND as STANDIN

pytestmark = pytest.mark.cluster

CASES = 3
TEST_SET = REPO / "data" / "sample" / "sample_testset.jsonl"


@pytest.fixture(scope="module")
def project(slurm: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("vllm-job")
    root = base / "proj"
    root.mkdir()
    copy_project(root)
    (root / ".venv").symlink_to(VENV)  # the job script runs .venv/bin/snakemake
    (base / "model").mkdir()
    cfg = {
        "dataset": {"n_shards": 1, "limit": CASES},
        "models": {
            "local": {
                "backend": "vllm",
                "model": "local",
                "model_path": str(base / "model"),
                "seed": 0,
            }
        },
        "experts": [
            {"model": "local", "strategy": "zero_shot"},
            {"model": "human_replay", "strategy": "baseline"},
        ],
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
    }
    (root / "vllm.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    # the GPU job simulates only the vLLM expert (docs/clusters.md: an overlay of those experts)
    (root / "gpu.yaml").write_text(
        "experts:\n  - {model: local, strategy: zero_shot}\n", encoding="utf-8"
    )
    return root


def job_env(project: Path) -> dict[str, str]:
    return environ(project, LECODE_VLLM_COMMAND=STANDIN, LECODE_MOCK_DATA=str(TEST_SET))


@pytest.fixture(scope="module")
def gpu_job(project: Path) -> dict[str, str]:
    proc = run(
        project,
        "sbatch",
        "--parsable",
        "--wait",
        "-A",
        ACCOUNT,
        "-p",
        PARTITION,
        # what the test node can give (the script asks for 8 CPUs and 64G by default)
        "--cpus-per-task=2",
        "--mem=4G",
        "--time=15",
        "--output=vllm-job-%j.log",
        "profiles/slurm/vllm_job.sh",
        "all_transcripts",
        "--configfile",
        "vllm.yaml",
        "gpu.yaml",
        env=job_env(project),
        timeout=600,
    )
    job_id = proc.stdout.strip().split(";")[0]
    fields = ("State", "ExitCode", "AllocTRES", "WorkDir")
    line = cmd(
        "sacct", "-X", "-j", job_id, "--parsable2", "--noheader", "--format=" + ",".join(fields)
    ).stdout.strip()
    record = dict(zip(fields, line.split("|"), strict=True))
    record["id"] = job_id
    record["log"] = (project / f"vllm-job-{job_id}.log").read_text(encoding="utf-8")
    return record


def transcripts(project: Path, expert: str) -> list[dict]:
    files = sorted((project / "results" / "transcripts" / expert).rglob("*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text("utf-8").splitlines()]


def test_the_gpu_job_serves_the_vllm_expert_on_its_node(project: Path, gpu_job: dict) -> None:
    log = gpu_job["log"]
    assert gpu_job["State"] == "COMPLETED" and gpu_job["ExitCode"] == "0:0", log[-4000:]
    assert "gres/gpu=1" in gpu_job["AllocTRES"], gpu_job
    assert Path(gpu_job["WorkDir"]).resolve() == project.resolve()
    assert f"vllm_job: job {gpu_job['id']}" in log
    assert re.search(r"vLLM server local http://127\.0\.0\.1:\d+/v1", log), log[-4000:]
    done = transcripts(project, "local")
    assert len(done) == CASES
    assert {t["provenance"]["expert.backend"] for t in done} == {"vllm"}
    assert all(t["stop_reason"] in ("advice", "max_turns") for t in done)
    # the hook stopped the server when the run ended
    assert not list((project / "store" / "servers").glob("*.json"))
    # only the experts of the overlay ran in the GPU job
    assert not (project / "results" / "transcripts" / "human_replay").exists()


def test_the_cluster_run_then_simulates_only_the_other_experts(
    project: Path, gpu_job: dict, user_profile: Path
) -> None:
    assert gpu_job["State"] == "COMPLETED"
    proc = run(
        project,
        *slurm_snakemake("all_tables", user_profile, "vllm.yaml", dry_run=True),
        env=job_env(project),
    )
    out = proc.stdout + proc.stderr
    simulated = re.findall(r"rule simulate:.*?wildcards: expert=([^,\s]+)", out, re.S)
    assert simulated == ["human_replay"], out[-4000:]
    matched = re.findall(r"rule match_facts:.*?wildcards: expert=([^,\s]+)", out, re.S)
    assert sorted(matched) == ["human_replay", "local"]


def test_a_cluster_job_that_needs_the_server_fails_naming_it(
    project: Path, gpu_job: dict, user_profile: Path, tmp_path: Path
) -> None:
    """profiles/slurm starts no vLLM server on the submit host (no-hooks): a simulation of the
    vLLM expert that was not done in the GPU job fails on the cluster with a clear message."""
    assert gpu_job["State"] == "COMPLETED"
    copy = tmp_path / "proj"
    shutil.copytree(project, copy, symlinks=True)
    # neither transcripts nor the journal nor stored responses: the simulation must ask
    shutil.rmtree(copy / "results" / "transcripts" / "local")
    shutil.rmtree(copy / "store")
    args = slurm_snakemake("all_transcripts", user_profile, "vllm.yaml", "gpu.yaml", fast_poll=True)
    proc = subprocess.run(
        args, cwd=copy, capture_output=True, text=True, timeout=600, env=job_env(copy)
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-4000:]
    assert "has been submitted with SLURM jobid" in out
    assert "no vLLM server is running for model entry 'local'" in out, out[-6000:]
    assert "vLLM server local http" not in out  # nothing was started on the submit host
