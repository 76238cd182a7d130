"""Exact regeneration on a fresh clone.

The working tree is committed into a scratch repository ("origin"), built with ``dvc repro`` and
pushed to a local DVC remote. Each test then works in a fresh ``git clone`` of it after
``dvc pull`` (whatever it holds then is all the clone knows):

* nothing is scheduled (``snakemake -n``), ``dvc status``/``dvc repro`` have nothing to do;
* deleting ``reports/`` and running ``make all_tables`` / ``make all`` rebuilds byte-identical
  tables, figures and figure data, running only the report jobs;
* a changed expert setting or an added expert schedules only that expert's jobs;
* added test cases simulate only the new cases (the per-dialogue journal comes with the pull);
* (slow) ``dvc exp run -S`` and ``dvc exp diff`` compare two settings;
* (slow) an LLM expert's run regenerates with its endpoint gone: every response is replayed
  from the pulled response store, nothing is sent.

The configuration is tiny (4 test cases, 2 shards; BERTScore off except in the LLM test).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
VENV = BIN.parent
GIT = ("git", "-c", "user.email=test@example.org", "-c", "user.name=test")
N_CASES = 4
N_SHARDS = 1


def run(
    cwd: Path, *cmd: str, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or environ(cwd)
    )
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def environ(root: Path, **extra: str) -> dict[str, str]:
    """The project's own package first (an editable install may point elsewhere)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LECODE_REPLAY",)}
    env["PYTHONPATH"] = str(root / "workflow")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def tool(name: str) -> str:
    return str(BIN / name)


def project_files() -> list[str]:
    """What a commit of the working tree would hold (tracked and not ignored)."""
    out = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [f for f in out if (REPO / f).is_file() and not f.startswith("tests/")]


def tiny_params(root: Path, **overrides: Any) -> None:
    """Four sample test cases in one shard; cheap statistics; BERTScore off."""
    cases = (root / "data/sample/sample_testset.jsonl").read_text(encoding="utf-8").splitlines()
    (root / "data/tiny_testset.jsonl").write_text("\n".join(cases[:N_CASES]) + "\n", "utf-8")
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["dataset"].update(test="data/tiny_testset.jsonl", n_shards=N_SHARDS, limit=None)
    params["metrics"]["bertscore"].update(enabled=False, batch_size=8, threads=1)
    params["report"]["bootstrap"]["resamples"] = 500
    for key, value in overrides.items():
        params[key] = value
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")


def make_origin(root: Path, remote: Path, **overrides: Any) -> SimpleNamespace:
    root.mkdir(parents=True)
    for rel in project_files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    tiny_params(root, **overrides)
    run(root, *GIT, "init", "-q")
    link_venv(root)
    run(root, *GIT, "add", "-A")
    run(root, *GIT, "commit", "-qm", "project")
    use_remote(root, remote)
    return SimpleNamespace(root=root, remote=remote)


def link_venv(root: Path) -> None:
    (root / ".venv").symlink_to(VENV)
    with open(root / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
        fh.write(".venv\n")


def use_remote(root: Path, remote: Path) -> None:
    # the default remote of .dvc/config, pointed at a scratch folder (config.local)
    run(root, tool("dvc"), "remote", "modify", "--local", "storage", "url", str(remote))


def build_and_push(origin: SimpleNamespace, env: dict[str, str] | None = None) -> None:
    run(origin.root, tool("dvc"), "repro", env=env)
    run(origin.root, *GIT, "add", "-A")
    run(origin.root, *GIT, "commit", "-qm", "dvc repro")
    run(origin.root, tool("dvc"), "push")


def fresh_clone(origin: SimpleNamespace, dest: Path) -> Path:
    run(dest.parent, *GIT, "clone", "-q", str(origin.root), str(dest))
    link_venv(dest)
    use_remote(dest, origin.remote)
    run(dest, tool("dvc"), "pull")
    return dest


def snakemake_dry(root: Path, target: str, *configs: str) -> dict[str, int]:
    """Jobs per rule that ``snakemake -n`` schedules (empty: nothing to be done)."""
    cmd = [tool("snakemake"), target, "-n", "--cores", "2"]
    if configs:
        cmd += ["--configfile", *configs]
    proc = run(root, *cmd)
    out = proc.stdout + proc.stderr
    if "Nothing to be done" in out:
        return {}
    counts = {}
    for line in out.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts


def tree(root: Path) -> dict[str, bytes]:
    """Files under ``root`` made by the workflow (not git's: README, .gitignore)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and p.name != "README.md"
    }


def ran_jobs(proc: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """Jobs per rule that a (make or snakemake) run reported."""
    part = (proc.stdout + proc.stderr).split("Job stats:", 1)[1]
    counts = {}
    for line in part.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    base = tmp_path_factory.mktemp("regen")
    org = make_origin(base / "origin", base / "remote")
    build_and_push(org)
    return org


@pytest.fixture
def clone(origin: SimpleNamespace, tmp_path: Path) -> Path:
    return fresh_clone(origin, tmp_path / "clone")


def test_the_default_remote_is_a_local_directory() -> None:
    text = (REPO / ".dvc" / "config").read_text(encoding="utf-8")
    assert re.search(r"^\s*remote = storage\s*$", text, re.M)
    url = re.search(r"\['remote \"storage\"'\]\s*\n\s*url = (\S+)", text)
    assert url is not None and not re.match(r"^[a-z0-9]+://", url.group(1))


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_fresh_clone_is_up_to_date_and_regenerates_identical_tables(
    origin: SimpleNamespace, clone: Path
) -> None:
    why = "a fresh clone after dvc pull must not rerun anything"
    status = run(origin.root, tool("dvc"), "status").stdout
    assert "Data and pipelines are up to date" in status, f"the original after dvc repro: {status}"
    assert snakemake_dry(clone, "all_tables") == {}, why
    assert snakemake_dry(clone, "all") == {}, why
    assert "Data and pipelines are up to date" in run(clone, tool("dvc"), "status").stdout
    repro = run(clone, tool("dvc"), "repro").stdout
    assert "Data and pipelines are up to date" in repro, repro
    assert run(clone, *GIT, "status", "--porcelain").stdout == ""

    shutil.rmtree(clone / "reports")
    made = run(clone, "make", "-o", ".venv/.installed", "all_tables")
    assert set(ran_jobs(made)) <= {"publish_tables", "publish_table4", "all_tables", "total"}
    assert "publish_tables" in ran_jobs(made)
    # rebuilt from the scores, not copied: the same bytes
    shutil.rmtree(clone / "reports")
    shutil.rmtree(clone / "results" / "tables")
    made = run(clone, "make", "-o", ".venv/.installed", "all_tables")
    assert {"tables", "publish_tables"} <= set(ran_jobs(made))
    assert "simulate" not in ran_jobs(made)
    want = tree(origin.root / "reports")
    got = tree(clone / "reports")
    tables = [k for k in want if k.startswith("tables/")]
    assert tables and all(got.get(k) == want[k] for k in [*tables, "metrics.json"]), [
        k for k in tables if got.get(k) != want[k]
    ]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_deleted_reports_come_back_identical_figures_and_html_too(
    origin: SimpleNamespace, clone: Path
) -> None:
    # The published reports are copies of results under their spec digests: deleting the
    # copies only re-publishes them; deleting the built results too rebuilds them.
    shutil.rmtree(clone / "reports")
    made = run(clone, "make", "-o", ".venv/.installed", "-o", "sysdeps", "all")
    publish = {"publish_tables", "publish_figures", "publish_html"}
    assert set(ran_jobs(made)) == publish | {"all", "total"}
    shutil.rmtree(clone / "reports")
    shutil.rmtree(clone / "results" / "tables")
    shutil.rmtree(clone / "build")
    made = run(clone, "make", "-o", ".venv/.installed", "-o", "sysdeps", "all")
    assert set(ran_jobs(made)) == {"tables", "figures", "html_report", "all", "total"} | publish
    want = tree(origin.root / "reports")
    got = tree(clone / "reports")
    differ = sorted(k for k in want if got.get(k) != want[k])
    assert not differ, differ
    page = (clone / "reports" / "index.html").read_text("utf-8")
    assert 'id="provenance-data"' in page and 'data-cell="table3|' in page


@pytest.mark.slow
def test_changed_or_added_experts_rerun_only_their_jobs(clone: Path) -> None:
    (clone / "topk.yaml").write_text(
        "models: {retrieval: {backend: offline, agent: retrieval, top_k: 3}}\n", "utf-8"
    )
    jobs = snakemake_dry(clone, "all_tables", "topk.yaml")
    assert jobs == {
        "simulate": N_SHARDS,
        "match_facts": N_SHARDS,
        "score_system": 1,
        "aggregate_scores": 1,
        "tables": 1,
        "publish_tables": 1,
        "all_tables": 1,
        "total": 2 * N_SHARDS + 5,
    }
    (clone / "more.yaml").write_text(
        "models: {retrieval3: {backend: offline, agent: retrieval, top_k: 3}}\n"
        "experts:\n"
        "  - {model: human_replay, strategy: baseline}\n"
        "  - {model: retrieval, strategy: baseline}\n"
        "  - {model: retrieval3, strategy: baseline}\n",
        "utf-8",
    )
    assert snakemake_dry(clone, "all_tables", "more.yaml") == jobs
    dry = run(clone, tool("snakemake"), "all_tables", "-n", "--configfile", "more.yaml")
    out = dry.stdout + dry.stderr
    experts = set(re.findall(r"wildcards: expert=([^,\s]+)", out))
    assert experts == {"retrieval3"}


@pytest.mark.slow
def test_added_test_cases_simulate_only_the_new_cases(clone: Path) -> None:
    sample = (clone / "data/sample/sample_testset.jsonl").read_text("utf-8").splitlines()
    (clone / "data/plus.jsonl").write_text("\n".join(sample[: N_CASES + 2]) + "\n", "utf-8")
    (clone / "plus.yaml").write_text("dataset: {test: data/plus.jsonl}\n", "utf-8")
    run(clone, tool("snakemake"), "all_transcripts", "--cores", "2", "--configfile", "plus.yaml")
    done = todo = 0
    for log in (clone / "logs" / "transcripts").rglob("*.log"):
        m = re.search(r"(\d+) already in the journal, (\d+) to simulate", log.read_text("utf-8"))
        assert m, log
        done, todo = done + int(m.group(1)), todo + int(m.group(2))
    assert (done, todo) == (2 * N_CASES, 2 * 2)  # two systems


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dvc_experiments_compare_two_settings(clone: Path) -> None:
    run(clone, tool("dvc"), "exp", "run", "-n", "turns5", "-S", "simulation.max_turns=5")
    diff = run(clone, tool("dvc"), "exp", "diff", "--json").stdout
    data = json.loads(diff)
    params = data["params"]["params.yaml"]["simulation.max_turns"]
    assert (params["old"], params["new"]) == (10, 5)
    metrics = data["metrics"]["reports/metrics.json"]
    assert any(k.endswith(".turns") and v["diff"] for k, v in metrics.items())


# --------------------------------------------------------------------------- LLM, offline


@pytest.fixture(scope="module")
def llm_origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    from lecode.mock import MockServer
    from tests.support.mock_llm import KEY_ENV

    base = tmp_path_factory.mktemp("regen-llm")
    with MockServer(case_files=[REPO / "data/sample/sample_testset.jsonl"]) as mock:
        model = {
            "backend": "openai",
            "base_url": mock.url,
            "model": "mock",
            "api_key_env": KEY_ENV,
            "temperature": 0.7,
            "seed": 7,
            "max_tokens": 512,
        }
        root = base / "origin"
        org = make_origin(root, base / "remote")
        params = yaml.safe_load((root / "params.yaml").read_text("utf-8"))
        params["models"]["mockllm"] = model
        params["experts"].append({"model": "mockllm", "strategy": "zero_shot"})
        params["metrics"]["bertscore"]["enabled"] = True
        (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")
        run(root, *GIT, "commit", "-qam", "an LLM expert")
        build_and_push(org, env=environ(root, **{KEY_ENV: "sk-test-0123456789abcdef"}))
    yield org  # the endpoint is gone from here on


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_llm_run_regenerates_with_its_endpoint_gone(
    llm_origin: SimpleNamespace, tmp_path: Path
) -> None:
    clone = fresh_clone(llm_origin, tmp_path / "clone")
    assert snakemake_dry(clone, "all_tables") == {}
    # another temperature for the LLM expert: only its jobs
    (clone / "temp.yaml").write_text("models: {mockllm: {temperature: 0.3}}\n", "utf-8")
    dry = run(clone, tool("snakemake"), "all_tables", "-n", "--configfile", "temp.yaml")
    assert set(re.findall(r"wildcards: expert=([^,\s]+)", dry.stdout + dry.stderr)) == {"mockllm"}
    # transcripts and journal of the LLM expert gone: make replays every response from the
    # pulled store (no key, no server: a request that is not stored fails the run)
    for kind in ("transcripts", "matches", "scores"):
        shutil.rmtree(clone / "results" / kind / "mockllm")
    shutil.rmtree(clone / "store" / "dialogues" / "mockllm")
    shutil.rmtree(clone / "reports")
    # A result under its digest stands for its whole derivation: with intermediates gone it
    # is still current; delete the tables and the aggregate too to regenerate everything.
    assert snakemake_dry(clone, "all_tables") == {"publish_tables": 1, "all_tables": 1, "total": 2}
    for kind in ("tables", "aggregate"):
        shutil.rmtree(clone / "results" / kind)
    made = run(clone, "make", "-o", ".venv/.installed", "all_tables")
    assert "LECODE_REPLAY=1" in made.stdout
    jobs = ran_jobs(made)
    assert jobs["simulate"] == N_SHARDS and jobs["tables"] == 1
    want = llm_origin.root / "reports" / "tables"
    for name in ("table2", "table3", "paired"):
        for ext in ("md", "csv", "tex"):
            f = f"{name}.{ext}"
            assert (clone / "reports/tables" / f).read_bytes() == (want / f).read_bytes(), f
    usage = (clone / "reports/tables/usage.csv").read_text("utf-8")
    assert usage != (want / "usage.csv").read_text("utf-8")  # now every response is cached
    doc = json.loads((clone / "reports/tables/table3.provenance.json").read_text("utf-8"))
    system = doc["systems"]["mockllm/zero_shot"]
    assert system["stop_reasons"] == {"advice": N_CASES} or "error" not in system["stop_reasons"]
    store = system["store"]["expert"]
    assert store["from_store"] == store["responses"] > 0
