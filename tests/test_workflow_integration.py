"""Runs the real Snakemake DAG on a tiny configuration in a temporary copy of the project."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lecode.fingerprint import CodeTree
from tests.conftest import copy_project

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY = """
dataset: {n_shards: 2, limit: 4}
metrics: {bertscore: {batch_size: 8, threads: 1}}
report: {bootstrap: {resamples: 1000}}
"""


def tiny_project(dest: Path) -> Path:
    copy_project(dest)
    (dest / "tiny.yaml").write_text(TINY, encoding="utf-8")
    return dest


def snakemake(
    project: Path, *args: str, configs: tuple[str, ...] = ("tiny.yaml",)
) -> subprocess.CompletedProcess[str]:
    # Targets first: --configfile takes several values and would swallow them.
    cmd = [SNAKEMAKE, *args, "--cores", "2", "--configfile", *configs]
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proj = tiny_project(tmp_path_factory.mktemp("proj"))
    run = snakemake(proj, "all_tables")
    assert run.returncode == 0, run.stderr[-4000:]
    return proj


def test_tables_are_built(project: Path) -> None:
    for stem in ("table2", "table3"):
        for ext in ("md", "csv", "tex"):
            assert (project / "reports" / "tables" / f"{stem}.{ext}").stat().st_size > 0
    md = (project / "reports" / "tables" / "table3.md").read_text(encoding="utf-8")
    assert "human_replay" in md and "retrieval" in md
    metrics = json.loads((project / "reports" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics


def test_every_dialogue_is_scored(project: Path) -> None:
    (agg,) = (project / "results" / "aggregate").glob("*/scores.csv")
    rows = list(csv.DictReader(agg.open(encoding="utf-8")))
    assert len(rows) == 2 * 4  # two systems x four cases
    replay = [r for r in rows if r["expert"] == "human_replay"]
    # The human lawyer's own questions, answered from the facts, elicit some facts.
    assert all(r["recall"] != "" for r in replay)
    assert sum(float(r["recall"]) for r in replay) > 0
    assert all(0 < int(r["turns"]) <= 10 for r in replay)


def test_rerun_is_a_noop(project: Path) -> None:
    run = snakemake(project, "-n", "all_tables")
    assert run.returncode == 0
    assert "Nothing to be done" in run.stdout + run.stderr


@pytest.mark.slow  # test_regeneration's added-expert test runs in the same tier
def test_adding_an_expert_schedules_only_its_jobs(project: Path) -> None:
    extra = project / "more.yaml"
    extra.write_text(
        "models: {retrieval3: {backend: offline, agent: retrieval, top_k: 3}}\n"
        "experts:\n"
        "  - {model: human_replay, strategy: baseline}\n"
        "  - {model: retrieval, strategy: baseline}\n"
        "  - {model: retrieval3, strategy: baseline}\n",
        encoding="utf-8",
    )
    run = snakemake(
        project, "all_tables", "-n", "--quiet", "rules", configs=("tiny.yaml", "more.yaml")
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    # 2 shards of simulation and matching for the new expert only, one scoring job,
    # then the aggregate and the table.
    counts = {
        line.split()[0]: int(line.split()[1])
        for line in out.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    assert counts.get("simulate") == 2, out
    assert counts.get("match_facts") == 2, out
    assert counts.get("score_system") == 1, out


def _scheduled(project: Path, *configs: str) -> dict[str, int]:
    run = snakemake(
        project, "all_tables", "-n", "--quiet", "rules", configs=configs or ("tiny.yaml",)
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    return {
        line.split()[0]: int(line.split()[1])
        for line in out.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit() and line.split()[0] != "total"
    }


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        # the matcher's code: matching of both systems and everything after it, and the
        # client audit (lecode.audit measures coverage with it) of the Table 4 study
        pytest.param(
            "agents/lexical_matcher.py",
            {
                "match_facts": 4,
                "score_system": 2,
                "aggregate_scores": 1,
                "tables": 1,
                "reliability": 3,
                "table4_build": 1,
            },
            marks=pytest.mark.slow,
        ),
        # the simulation loop: everything but the shards
        pytest.param(
            "evaluation/consultations.py",
            {
                "simulate": 4,
                "match_facts": 4,
                "score_system": 2,
                "aggregate_scores": 1,
                "tables": 1,
            },
            marks=pytest.mark.slow,
        ),
        # a metric: scores and after, and Table 4 (rendered with the metric declarations)
        pytest.param(
            "metrics/clarification.py",
            {"score_system": 2, "aggregate_scores": 1, "tables": 1, "table4_build": 1},
            marks=pytest.mark.slow,
        ),
        # table rendering: the tables only (Table 4 is rendered by its own job)
        # (the one of the default tier: the cheapest to rebuild)
        ("report/render.py", {"tables": 1, "table4_build": 1}),
    ],
)
def test_a_code_edit_reruns_exactly_the_dependent_jobs(
    project: Path, module: str, expected: dict[str, int]
) -> None:
    path = project / "workflow/lecode" / module
    original = path.read_bytes()
    try:
        # code, not a comment: comments and docstrings are not part of a fingerprint
        path.write_bytes(original + b"\n_EDITED_FOR_THE_TEST = 1\n")
        counts = _scheduled(project)
    finally:
        path.write_bytes(original)
    counts.pop("all_tables", None)
    counts.pop("publish_tables", None)
    assert counts == expected
    assert _scheduled(project) == {}  # restored: current again


@pytest.mark.slow
def test_comments_rerun_nothing_and_a_metric_edit_reruns_the_scoring(project: Path) -> None:
    settings = project / "workflow/lecode/config/models.py"
    metric = project / "workflow/lecode/metrics/clarification.py"
    originals = {p: p.read_bytes() for p in (settings, metric)}
    try:
        text = originals[settings].decode("utf-8")
        assert text.startswith('"""')
        settings.write_text('"""Reworded. ' + text[3:] + "\n# a note\n", encoding="utf-8")
        metric.write_bytes(originals[metric] + b"\n# why recall@k stops at k\n")
        assert _scheduled(project) == {}
        metric.write_bytes(originals[metric] + b"\n_EDITED_FOR_THE_TEST = 1\n")
        counts = _scheduled(project)
    finally:
        for path, original in originals.items():
            path.write_bytes(original)
    expected = {
        "score_system": 2,
        "aggregate_scores": 1,
        "tables": 1,
        "publish_tables": 1,
        "all_tables": 1,
    }
    # Table 4 is rendered with the metric declarations when its step imports them
    tree = CodeTree(project / "workflow")
    if "lecode.metrics.clarification" in tree.closure("lecode.reliability.steps.table4"):
        expected["table4_build"] = 1
    assert counts == expected


@pytest.mark.slow
def test_runtime_only_settings_rerun_nothing(project: Path) -> None:
    extra = project / "runtime.yaml"
    extra.write_text(
        "metrics: {bertscore: {threads: 2, mem_mb: 1000}}\n"
        "models: {retrieval: {backend: offline, agent: retrieval, label: Retrieval (BM25)}}\n",
        encoding="utf-8",
    )
    counts = _scheduled(project, "tiny.yaml", "runtime.yaml")
    counts.pop("all_tables", None)
    counts.pop("publish_tables", None)
    assert counts == {"tables": 1}  # a label is shown in the tables, and only there


@pytest.mark.slow
def test_a_new_metric_reruns_scoring_and_what_follows_only(project: Path) -> None:
    """The metric of tests/test_metrics_extension.py, added to the finished run as its one new
    module: scoring and what follows rerun, never sharding, simulation, matching or judging."""
    from tests.test_metrics_extension import CRITICAL_RECALL, NEW_MODULE

    module = project / "workflow" / NEW_MODULE
    module.write_text(CRITICAL_RECALL, encoding="utf-8")
    try:
        jobs = _scheduled(project)
    finally:
        module.unlink()
    for step in ("shard_dataset", "simulate", "match_facts", "judge_advice"):
        assert step not in jobs, jobs
    assert jobs.get("score_system", 0) >= 1 and jobs.get("tables") == 1, jobs
    assert _scheduled(project) == {}  # removed again: current
