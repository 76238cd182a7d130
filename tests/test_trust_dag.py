"""The real DAG against the mock endpoint with every trust check on: Table 4 (a mock client and
the mock judge), replicate runs and the noise report, the judge-drift sentinel, and a drifted
judge failing the run before any table is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import copy_project
from tests.test_llm_dag import Mock, job_env, snakemake

pytestmark = pytest.mark.slow


def trust_config(url: str, *, max_turns: int = 3) -> dict[str, Any]:
    return {
        "dataset": {"n_shards": 1, "limit": 3},
        "models": {
            "mock": {
                "backend": "openai",
                "base_url": url,
                "model": "mock",
                "api_key_env": "LECODE_TEST_API_KEY",
                "temperature": 0.7,
                "seed": 7,
                "max_tokens": 256,
                "timeout": 10,
                "max_retries": 2,
                "label": "Mock ZS",
            }
        },
        "experts": [
            {"model": "human_replay", "strategy": "baseline"},
            {"model": "mock", "strategy": "zero_shot"},
        ],
        "client": {"model": "mock", "strategy": "first_person_dialogue"},
        "matcher": {"model": "lexical"},
        "judge": {"model": "mock"},
        "simulation": {"max_turns": max_turns},
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
        "llm": {"retry": {"base_delay": 0.001, "rate_limit_delay": 0.001, "max_delay": 0.01}},
        "reliability": {
            "enabled": True,
            "n_cases": 3,
            "clients": [
                {"model": "mock", "strategies": ["first_person_dialogue"], "label": "Mock client"}
            ],
            "judge": "mock",
        },
        "replicates": {"n": 2, "cases": 2},
    }


@pytest.mark.timeout(1200)
def test_trust_checks_in_the_dag(tmp_path: Path) -> None:
    mock = Mock.spawn()
    try:
        project = copy_project(tmp_path)
        (project / "llm.yaml").write_text(yaml.safe_dump(trust_config(mock.url)), "utf-8")
        run = snakemake(project, "all_tables", env=job_env())
        out = run.stdout + run.stderr
        assert run.returncode == 0, out[-6000:]
        tables = project / "reports" / "tables"
        t4 = (tables / "table4.md").read_text(encoding="utf-8")
        assert "| Mock client | ours | — | — | " in t4 and "| Qwen-max | paper | 92.4 |" in t4
        assert (tables / "noise.md").is_file() and (tables / "adjacent.md").is_file()
        noise = (tables / "noise.json").read_text(encoding="utf-8")
        assert '"n_systems": 2' in noise
        assert '"status": "ok"' in (tables / "judge_sentinel.json").read_text(encoding="utf-8")
        replicates = sorted((project / "results" / "replicates").glob("*/*/*/*/scores.csv"))
        assert len(replicates) == 2 * (1 + 3)  # 2 systems x (base + one run per factor)
        assert (tables / "audit.md").is_file() and (tables / "robustness.md").is_file()

        # the judge drifts; a new scoring run (another max_turns) re-judges the anchors
        mock.control.set_faults({"judge_drift": 1.0})
        cfg = trust_config(mock.url, max_turns=2)
        (project / "llm.yaml").write_text(yaml.safe_dump(cfg), "utf-8")
        run = snakemake(project, "all_tables", env=job_env())
        out = run.stdout + run.stderr
        assert run.returncode != 0
        assert "Error in rule judge_sentinel" in out, out[-6000:]
        assert "the judge has drifted" in out, out[-6000:]
    finally:
        mock.stop()
