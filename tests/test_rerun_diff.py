"""``lecode plan --diff REF``: which jobs rerun after a run at a git ref, and why, in a copy of the
project committed to a throwaway git repository (no Snakemake run: the plan alone says)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode import cli
from lecode.rerun_diff import changed_keys, compute_diff, file_label, setting_items, with_item
from tests.conftest import copy_project

#: an LLM expert next to the two offline ones (planning needs no endpoint and no key)
LLM_ENTRY = {
    "backend": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "api_key_env": "LECODE_TEST_API_KEY",
    "temperature": 0.7,
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with an LLM expert, committed to a throwaway repository."""
    root = copy_project(tmp_path_factory.mktemp("proj"))
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["models"]["llm"] = dict(LLM_ENTRY)
    params["experts"].append({"model": "llm", "strategy": "zero_shot"})
    (root / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), "utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def repo(committed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The committed project as the working directory; the test's edits are undone after."""
    monkeypatch.chdir(committed)
    yield committed
    git(committed, "checkout", "-q", "--", ".")
    git(committed, "clean", "-fdq")


def plan_diff(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["plan", "--diff", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def steps_of(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["step"]: s for s in data["steps"]}


def test_comments_and_docstrings_rerun_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = repo / "workflow/lecode/config/models.py"
    text = settings.read_text(encoding="utf-8")
    settings.write_text('"""Reworded. ' + text[3:] + "\n# a note\n", encoding="utf-8")
    metric = repo / "workflow/lecode/metrics/clarification.py"
    metric.write_text(metric.read_text(encoding="utf-8") + "\n# why\n", encoding="utf-8")

    code, out, _ = plan_diff(capsys=capsys)  # --diff alone: HEAD
    assert code == 0
    assert "Nothing reruns" in out
    assert "2 files changed only in comments, docstrings or layout" in out
    assert "lecode.config.models, lecode.metrics.clarification" in out

    code, out, _ = plan_diff("HEAD", "--json", capsys=capsys)
    data = json.loads(out)
    assert data["steps"] == [] and data["files"] == [] and data["settings"] == []
    assert data["cosmetic"] == ["lecode/config/models.py", "lecode/metrics/clarification.py"]


def test_a_metric_edit_reruns_the_steps_that_hold_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lecode import fingerprint as fp

    metric = repo / "workflow/lecode/metrics/clarification.py"
    metric.write_text(metric.read_text(encoding="utf-8") + "\n_EDITED = 1\n", encoding="utf-8")
    code, out, _ = plan_diff("HEAD", "--json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    assert data["files"] == ["lecode/metrics/clarification.py"]
    steps = steps_of(data)
    tree = fp.CodeTree(repo / "workflow")
    holders = {
        s for s in steps if "lecode.metrics.clarification" in tree.closure(tree.step_module(s))
    }
    # the three systems' scores and what is built from them; the simulation, the matching
    # and the shards are untouched
    assert "score_system" in holders
    assert {
        s: r["jobs"] for s, r in steps.items() if s in ("score_system", "aggregate_scores")
    } == {
        "score_system": 3,
        "aggregate_scores": 1,
    }
    assert not set(steps) & {"shard_dataset", "simulate", "match_facts", "reliability"}
    assert steps["score_system"]["of"] == 3
    for s, r in steps.items():
        if s in holders:  # its own closure holds the module
            assert r["code"] == ["lecode.metrics.clarification"], s
        else:  # it follows a step that holds it
            assert r["code"] == [] and r["after"], s
    assert all(r["settings"] == [] and r["prompts"] == [] for r in steps.values())

    _, text, _ = plan_diff("HEAD", capsys=capsys)
    assert "score_system: 3 of 3 jobs: code lecode.metrics.clarification" in text
    assert "simulate" not in text


def test_a_temperature_change_reruns_that_model_s_jobs(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = repo / "params.yaml"
    params.write_text(
        params.read_text(encoding="utf-8").replace("temperature: 0.7", "temperature: 0.2"),
        encoding="utf-8",
    )
    code, out, _ = plan_diff("HEAD", "--json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    assert data["settings"] == ["models.llm"]
    assert data["setting_keys"] == {"models.llm": ["temperature"]}
    steps = steps_of(data)
    # 3 systems x 2 shards: the LLM expert's 2 shards, its one score, and all built from them
    assert {s: (r["jobs"], r["of"]) for s, r in steps.items()} == {
        "simulate": (2, 6),
        "match_facts": (2, 6),
        "score_system": (1, 3),
        "aggregate_scores": (1, 1),
        "tables": (1, 1),
        "figures": (1, 1),
        "html_report": (1, 1),
    }
    assert all(r["settings"] == ["models.llm"] and r["code"] == [] for r in steps.values())
    _, text, _ = plan_diff(capsys=capsys)
    assert "changed settings: models.llm (temperature)" in text
    assert "simulate: 2 of 6 jobs: settings models.llm" in text


def test_a_prompt_edit_and_a_new_expert(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = repo / "workflow/prompts/expert/zero_shot.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\n请简洁。\n", encoding="utf-8")
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["models"]["retrieval3"] = {"backend": "offline", "agent": "retrieval", "top_k": 3}
    params["experts"].append({"model": "retrieval3", "strategy": "baseline"})
    (repo / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), "utf-8")

    code, out, _ = plan_diff("HEAD", "--json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    assert data["files"] == ["prompts/expert/zero_shot.txt"]
    assert data["settings"] == ["experts", "models.retrieval3"]
    sim = steps_of(data)["simulate"]
    # the LLM expert's 2 shards for the prompt, the new expert's 2 for the settings
    assert (sim["jobs"], sim["of"], sim["new"]) == (4, 8, 2)
    assert sim["prompts"] == ["prompts/expert/zero_shot.txt"]
    # the new expert needs its model entry: neither change alone is valid, both are named
    assert sim["settings"] == ["experts", "models.retrieval3"]


def test_a_strategy_edit_reruns_only_the_systems_that_use_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strategy = repo / "workflow/lecode/strategies/expert/zero_shot.py"
    strategy.write_text(strategy.read_text(encoding="utf-8") + "\n_EDITED = 1\n", "utf-8")
    code, out, _ = plan_diff("HEAD", "--json", capsys=capsys)
    assert code == 0
    steps = steps_of(json.loads(out))
    # no step imports the declaration: the zero-shot system's identity holds its digest
    assert {s: r["jobs"] for s, r in steps.items() if s in ("simulate", "score_system")} == {
        "simulate": 2,
        "score_system": 1,
    }
    assert steps["simulate"]["chosen"] == ["lecode.strategies.expert.zero_shot"]
    assert steps["simulate"]["code"] == []


def test_a_bad_ref_is_named(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = plan_diff("no-such-ref", capsys=capsys)
    assert code == 1
    assert "no-such-ref: not a commit of the repository" in err


def test_plan_lists_the_jobs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["plan"]) == 0
    out = capsys.readouterr().out
    assert "  simulate: 6 jobs" in out and "  score_system: 3 jobs" in out
    assert "  tables: 1 job\n" in out
    assert cli.main(["plan", "--json"]) == 0
    jobs = json.loads(capsys.readouterr().out)
    sims = [j for j in jobs if j["step"] == "simulate"]
    assert len(sims) == 6 and all(j["output"].startswith("results/transcripts/") for j in sims)


# --------------------------------------------------------------------------- the pieces


def test_settings_are_cut_into_keys_and_model_entries() -> None:
    data = {"dataset": {"n_shards": 2}, "models": {"a": {"x": 1}, "b": {"x": 2}}}
    assert setting_items(data) == {
        "dataset": {"n_shards": 2},
        "models.a": {"x": 1},
        "models.b": {"x": 2},
    }
    changed = with_item(data, "models.a", {"x": 3})
    assert changed["models"] == {"a": {"x": 3}, "b": {"x": 2}}
    assert data["models"]["a"] == {"x": 1}  # not modified in place
    assert changed_keys({"t": 1, "r": {"s": 0, "k": 2}}, {"t": 2, "r": {"s": 1, "k": 2}}) == [
        "r.s",
        "t",
    ]


def test_file_labels() -> None:
    assert file_label("lecode/metrics/clarification.py") == "lecode.metrics.clarification"
    assert file_label("lecode/metrics/__init__.py") == "lecode.metrics"
    assert file_label("scripts/score_system.py") == "scripts/score_system.py"


def test_compute_diff_without_changes(repo: Path) -> None:
    diff = compute_diff("HEAD", ["params.yaml"], cwd=repo)
    assert diff.steps == [] and diff.files == [] and diff.cosmetic == []
