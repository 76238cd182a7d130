"""The real Snakemake DAG with one expert at a closed port: everything that can be built is
built (the tables, with the offline system's row), then the run exits non-zero with one summary
naming the system, the endpoint URL, the failure class and the count, in well under two
minutes with the default retry settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import copy_project
from tests.support.mock_llm import KEY_ENV

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
N_CASES = 4


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on it now
    return port


@pytest.mark.slow  # about 90 s on 2 busy cores
def test_a_dead_expert_endpoint_fails_the_run_with_a_summary(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    copy_project(project)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    cfg = {
        "dataset": {"n_shards": 1, "limit": N_CASES},
        "models": {
            # the defaults: concurrency 4, timeout 120 s, max_retries 6, retry delays from 1 s
            "dead": {"backend": "openai", "base_url": url, "model": "m", "api_key_env": KEY_ENV}
        },
        "experts": [
            {"model": "human_replay", "strategy": "baseline"},
            {"model": "dead", "strategy": "zero_shot"},
        ],
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
        "reliability": {"enabled": False},
    }
    (project / "dead.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    env = {**os.environ, KEY_ENV: "sk-test-0123456789abcdef"}
    env.pop("LECODE_REPLAY", None)
    started = time.monotonic()
    run = subprocess.run(
        [SNAKEMAKE, "all_tables", "--cores", "2", "--configfile", "dead.yaml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    elapsed = time.monotonic() - started
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-4000:]
    assert elapsed < 120, elapsed
    # the dead system's job gave up at once instead of retrying each dialogue in turn
    (bench,) = (project / "results" / "benchmarks" / "transcripts" / "dead").rglob("*.tsv")
    assert float(bench.read_text().splitlines()[1].split("\t")[0]) < 20
    # what could be built was built: the published tables, with both rows
    table = (project / "reports" / "tables" / "table3.md").read_text(encoding="utf-8")
    assert "human_replay" in table or "Human" in table
    # one summary: system, endpoint URL, failure class, count
    assert f"system dead/zero_shot: {N_CASES}/{N_CASES} dialogues failed (every one" in out, out[
        -4000:
    ]
    assert f"  {N_CASES} x connection at {url}/chat/completions" in out
    assert "every dialogue failed: dead/zero_shot (simulation)" in out
    assert "matching failed" not in out  # the matches of failed dialogues are no failures
