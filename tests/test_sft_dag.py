"""The SFT stages in the real DAG: `snakemake sft_data` builds the three variants offline with
the default params.yaml; training is opt-in and names what it is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_project

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
REPO = Path(__file__).resolve().parent.parent


def snakemake(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SNAKEMAKE, *args, "--cores", "2"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proj = copy_project(tmp_path_factory.mktemp("sftproj"))
    (proj / "configs").mkdir()
    for name in ("paper.yaml", "sft.yaml"):
        (proj / "configs" / name).write_text((REPO / "configs" / name).read_text("utf-8"), "utf-8")
    return proj


@pytest.mark.slow
def test_sft_data_builds_three_variants_offline(project: Path) -> None:
    run = snakemake(project, "sft_data")
    assert run.returncode == 0, run.stderr[-3000:]
    stats = {}
    for path in sorted((project / "results/sft").glob("*/stats.json")):
        s = json.loads(path.read_text(encoding="utf-8"))
        assert s["spec"] == path.parent.name  # outputs live under their spec's digest
        assert (path.parent / "train.jsonl").stat().st_size > 0
        stats[s["variant"]] = s
    assert set(stats) == {"direct", "keyfact", "keyfact-e"}
    assert all(s["samples"] > 0 and s["dialogues"] > 0 for s in stats.values())
    again = snakemake(project, "sft_data", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_training_is_opt_in_and_names_the_missing_base_model(project: Path) -> None:
    run = snakemake(project, "sft_adapters", "-n")
    assert run.returncode != 0
    assert "sft.train.base_model" in run.stdout + run.stderr


@pytest.mark.slow
def test_the_paper_configuration_plans_three_trainings_on_gpus(project: Path) -> None:
    (project / "models/Qwen2.5-7B-Instruct").mkdir(parents=True)
    env_keys = ["DASHSCOPE_API_KEY=x", "OPENAI_API_KEY=x"]
    cmd = [
        "env",
        *env_keys,
        SNAKEMAKE,
        "sft_adapters",
        "-n",
        "--cores",
        "32",
        "--resources",
        "gpu=4",
        "--configfile",
        "configs/paper.yaml",
        "configs/sft.yaml",
        "--config",
        "experts=[{model: human_replay, strategy: baseline}]",
    ]
    run = subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    for rule, n in (("train_lora", 3), ("publish_lora", 3)):
        assert any(line.split() == [rule, str(n)] for line in out.splitlines()), out[-2000:]
    assert "gpu=4" in out
    for variant in ("direct", "keyfact", "keyfact-e"):
        assert f"results/sft/lora/{variant}-sft" in out
