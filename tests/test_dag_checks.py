"""Configuration problems stop the DAG before any job runs; DVC cannot delete finished work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import copy_project

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("dagcheck"))


def dry_run(
    project: Path, extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (project / "extra.yaml").write_text(extra, encoding="utf-8")
    cmd = [SNAKEMAKE, "all_tables", "-n", "--cores", "1", "--configfile", "extra.yaml"]
    environ = {k: v for k, v in os.environ.items() if k != "LECODE_REPLAY"}
    environ.update(env or {})
    return subprocess.run(
        cmd, cwd=project, capture_output=True, text=True, timeout=300, env=environ
    )


LLM = "{backend: openai, base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: LECODE_TEST_KEY}"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(
            f"models: {{a: {LLM}, b: {LLM}}}\n"
            "experts: [{model: a, strategy: zero_shot, label: X},"
            " {model: b, strategy: zero_shot, label: X}]\n",
            "label 'X' is also the label of experts[0]",
            marks=pytest.mark.slow,  # tests/test_settings.py checks it without Snakemake
        ),
        pytest.param(
            "dataset: {test: data/empty.jsonl}\n",
            "dataset.test: data/empty.jsonl holds no consultations",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "simulation: {max_turns: 0}\n", "simulation.max_turns", marks=pytest.mark.slow
        ),
        pytest.param(
            "models: {lexical: {backend: offline, agent: lexical, treshold: 0.4}}\n",
            "models.lexical.treshold: unknown setting",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_bad_configuration_fails_when_the_dag_is_built(
    project: Path, extra: str, message: str
) -> None:
    (project / "data/empty.jsonl").write_text("", encoding="utf-8")
    run = dry_run(project, extra)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert message in out, out[-3000:]
    assert "Job stats" not in out  # nothing was scheduled
    assert "Traceback" not in out


@pytest.mark.slow  # the check itself: tests/test_settings.py (default tier)
def test_a_missing_api_key_stops_the_run_before_any_job(project: Path) -> None:
    (project / "extra.yaml").write_text(
        f"models: {{a: {LLM}}}\nexperts: [{{model: a, strategy: zero_shot}}]\n", encoding="utf-8"
    )
    cmd = [SNAKEMAKE, "all_tables", "--cores", "1", "--configfile", "extra.yaml"]
    env = {k: v for k, v in os.environ.items() if k not in ("LECODE_REPLAY", "LECODE_TEST_KEY")}
    run = subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=300, env=env)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert "models.a.api_key_env: environment variable LECODE_TEST_KEY is not set" in out, out
    assert not (project / "results").exists()  # not even the shards were made


@pytest.mark.slow
def test_replay_needs_no_api_key(project: Path) -> None:
    run = dry_run(
        project,
        f"models: {{a: {LLM}}}\nexperts: [{{model: a, strategy: zero_shot}}]\n",
        env={"LECODE_REPLAY": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_every_dvc_output_is_persisted() -> None:
    """DVC deletes a stage's non-persisted outputs before its command runs, even when the
    command then refuses; so every output must be persisted."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    for name, stage in stages.items():
        for kind in ("outs", "metrics", "plots"):
            for out in stage.get(kind, []):
                assert isinstance(out, dict), f"{name}.{kind}: {out} is not persisted"
                ((path, opts),) = out.items()
                assert opts.get("persist") is True, f"{name}.{kind}: {path} is not persisted"
        assert stage["cmd"].startswith("scripts/dvc_stage.sh ")


def test_dvc_stage_refuses_while_snakemake_holds_the_lock(tmp_path: Path) -> None:
    (tmp_path / ".snakemake/locks").mkdir(parents=True)
    (tmp_path / ".snakemake/locks/0.input.lock").write_text("x", encoding="utf-8")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/metrics.json").write_text(json.dumps({"a": 1}), encoding="utf-8")
    run = subprocess.run(
        ["bash", str(REPO / "scripts/dvc_stage.sh"), "/bin/false", "all_tables"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 75
    assert "another Snakemake run holds" in run.stderr
    assert (tmp_path / "reports/metrics.json").is_file()


def test_lock_checker_names_stale_dependencies() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from check_dvc_lock import stale
    finally:
        sys.path.pop(0)
    status = {
        "all_tables": [
            {"changed outs": {"results": "deleted"}},
            {"changed deps": {"workflow": "modified"}},
        ],
        "report": [{"changed outs": {"reports/figures": "deleted"}}],
    }
    assert stale(status) == ["all_tables: changed deps: workflow (modified)"]
    assert stale({"report": [{"changed outs": {"build": "deleted"}}]}) == []
    # another stage's output that a fresh clone has not pulled is absent, not stale
    assert stale({"report": [{"changed deps": {"reports/tables": "deleted"}}]}) == []
    assert stale({"x": [{"changed params": {"params.yaml": {"models": "modified"}}}]})
