"""The real Snakemake DAG with every LLM role against the mock endpoint.

A temporary copy of the project runs ``snakemake all_tables`` with a configuration in which two
LLM experts (``zero_shot`` and ``mediq``), the simulated client, the fact matcher and the judge
all use one model entry that points at the mock OpenAI-compatible server, running in a child
process on loopback. The mock requires the API key, which reaches the jobs only through an
environment variable; no file of the project may contain it afterwards.

Fast (about 45 s on 2 cores): the tables are built with the judge columns filled, a second run
makes no request, and ``scripts/gpu_check.sh`` is valid shell that fails with clear messages.
Slow: fault injection (429/500) with every retry accounted for, a persistent fault that leaves
dialogues in ``error`` until a rerun retries exactly those, replay of a warm store with the mock
stopped (byte-identical tables), and the GPU check script's whole path on CPU (dry mode).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from lecode.dataset import load_cases
from lecode.mock import MockControl, spawn_mock
from lecode.shards import select
from tests.conftest import copy_project
from tests.support.mock_llm import KEY_ENV
from tests.support.vllm_standin import COMMAND as STANDIN_COMMAND

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TEST_SET = REPO / "data" / "sample" / "sample_testset.jsonl"
N_CASES = 4
KEY = "sk-lecode-dagtest-5b9e1f07c3a84d26"
LLM_SYSTEMS = (("mock", "zero_shot"), ("mock", "mediq"))
JUDGE_METRICS = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")
SERVED = "mock-2025-06-01"
RETRY_LINE = re.compile(r"retry \d+/\d+ for model 'mock'")


def llm_config(url: str, *, max_retries: int = 10) -> dict[str, Any]:
    """Every LLM role on the mock; tiny sizes so that one run takes about half a minute."""
    return {
        "dataset": {"n_shards": 2, "limit": N_CASES},
        "models": {
            "mock": {
                "backend": "openai",
                "base_url": url,
                "model": "mock",
                "api_key_env": KEY_ENV,
                "temperature": 0.7,
                "seed": 7,
                "max_tokens": 256,
                "concurrency": 8,
                "timeout": 10,
                "max_retries": max_retries,
                "price": {"prompt": 0.001, "completion": 0.002},
            }
        },
        "experts": [{"model": m, "strategy": s} for m, s in LLM_SYSTEMS],
        "client": {"model": "mock", "strategy": "first_person_dialogue"},
        "matcher": {"model": "mock"},
        "judge": {"model": "mock"},
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
        "llm": {"retry": {"base_delay": 0.001, "rate_limit_delay": 0.001, "max_delay": 0.01}},
        # the judge-drift sentinel has its own DAG test (tests/test_trust_dag.py); here its
        # anchor requests would add retries that no transcript, match or judgement records
        "judge_sentinel": {"enabled": False},
    }


def job_env(*, key: bool = True, replay: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "LECODE_REPLAY")}
    if key:
        env[KEY_ENV] = KEY
    if replay:
        env["LECODE_REPLAY"] = "1"
    return env


def snakemake(
    project: Path, *args: str, env: Mapping[str, str], configs: tuple[str, ...] = ("llm.yaml",)
) -> subprocess.CompletedProcess[str]:
    # Targets first: --configfile takes several values and would swallow them.
    cmd = [SNAKEMAKE, *args, "--cores", "2", "--configfile", *configs]
    return subprocess.run(
        cmd, cwd=project, capture_output=True, text=True, timeout=600, env=dict(env)
    )


def run_ok(project: Path, *args: str, env: Mapping[str, str]) -> str:
    run = snakemake(project, "all_tables", *args, env=env)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    return out


@dataclass
class Mock:
    proc: subprocess.Popen[str]
    url: str
    control: MockControl

    @classmethod
    def spawn(cls, faults: dict[str, float] | None = None, *extra: str) -> Mock:
        proc, url = spawn_mock(
            [TEST_SET],
            faults=faults,
            extra_args=["--api-key-env", KEY_ENV, *extra],
            env=job_env(),
        )
        return cls(proc, url, MockControl(url))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def new_project(root: Path, mock: Mock, **cfg: Any) -> Path:
    project = copy_project(root)
    text = yaml.safe_dump(llm_config(mock.url, **cfg), allow_unicode=True, sort_keys=False)
    (project / "llm.yaml").write_text(text, encoding="utf-8")
    return project


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def records(project: Path, kind: str) -> list[dict[str, Any]]:
    return [r for p in sorted((project / "results" / kind).rglob("*.jsonl")) for r in read_jsonl(p)]


def table3_cells(project: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    rows = read_csv(project / "reports" / "tables" / "table3.csv")
    return {(r["expert"], r["strategy"], r["metric"]): r for r in rows}


def table_bytes(project: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((project / "reports" / "tables").glob("*.csv"))}


def retried_in_usage(project: Path) -> int:
    return sum(
        int(u.get("retries", 0))
        for kind in ("transcripts", "matches", "judgements")
        for rec in records(project, kind)
        for u in rec.get("usage", {}).values()
    )


def retry_log_lines(project: Path) -> int:
    return sum(
        len(RETRY_LINE.findall(p.read_text(encoding="utf-8", errors="replace")))
        for p in (project / "logs").rglob("*.log")
    )


def assert_no_secret(project: Path) -> None:
    needle = KEY.encode()
    leaked = [
        str(p.relative_to(project))
        for p in project.rglob("*")
        if p.is_file() and not p.is_symlink() and needle in p.read_bytes()
    ]
    assert not leaked, f"the API key was written to {leaked}"


def wipe_outputs(project: Path) -> None:
    """Everything but the response store: results, tables, logs and the dialogue journal."""
    for name in ("results", "reports", "logs", "store/dialogues"):
        shutil.rmtree(project / name, ignore_errors=True)


# -- one warm project shared by the fast tests (and, at the end, by the replay test) ---------


@dataclass
class Warm:
    project: Path
    mock: Mock
    first: dict[str, Any]


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warm]:
    # the endpoint answers requests for the alias "mock" with a dated model id, and reports
    # cached prompt tokens in DeepSeek's fields
    mock = Mock.spawn(None, "--answer-model", f"mock={SERVED}", "--cache-usage", "deepseek")
    try:
        project = new_project(tmp_path_factory.mktemp("llmdag"), mock)
        run_ok(project, env=job_env())
        yield Warm(project, mock, mock.control.stats())
    finally:
        mock.stop()


@pytest.mark.timeout(300)
def test_tables_are_built_with_judge_columns(warm: Warm) -> None:
    project = warm.project
    requests = warm.first["requests"]
    assert {"expert", "client", "matcher", "judge"} <= set(requests), requests
    purposes = {e["purpose"] for e in warm.first["log"]}
    assert {"turn", "confidence", "ask", "answer", "match", "judge"} <= purposes, purposes

    transcripts = records(project, "transcripts")
    assert len(transcripts) == N_CASES * len(LLM_SYSTEMS)
    assert all(t["stop_reason"] in ("advice", "max_turns") for t in transcripts)
    assert all(t["usage"]["expert"]["calls"] > 0 for t in transcripts)
    assert all(t["provenance"].get("expert.backend") == "openai" for t in transcripts)

    cells = table3_cells(project)
    for expert, strategy in LLM_SYSTEMS:
        for metric in ("recall", "ndcg", "rouge_l", *JUDGE_METRICS):
            cell = cells[(expert, strategy, metric)]
            assert cell["value"] != "", (expert, strategy, metric)
            assert cell["n"] == cell["N"] == str(N_CASES), cell
        for metric in JUDGE_METRICS:
            assert 10.0 <= float(cells[(expert, strategy, metric)]["value"]) <= 100.0
    (agg,) = (project / "results" / "aggregate").glob("*/scores.csv")
    rows = read_csv(agg)
    assert len(rows) == N_CASES * len(LLM_SYSTEMS)
    assert all(r[m] != "" for r in rows for m in JUDGE_METRICS)
    usage = read_csv(project / "reports" / "tables" / "usage.csv")
    assert {r["role"] for r in usage} == {"expert", "client", "matcher", "judge"}
    # a dialogue resends its growing prefix: the provider's cache answers part of each prompt,
    # and the cost bills those tokens (no cached price set: at the prompt price)
    for r in usage:
        prompt, cached = int(r["prompt_tokens"]), int(r["cached_prompt_tokens"])
        assert 0 < cached < prompt, r
        cost = (prompt * 0.001 + int(r["completion_tokens"]) * 0.002) / 1000
        assert float(r["cost"]) == pytest.approx(cost, abs=1e-6), r
    # the model that answered is recorded and noted under Table 3
    table3 = (project / "reports" / "tables" / "table3.md").read_text(encoding="utf-8")
    assert f"configured model id mock, replies named {SERVED} ×" in table3
    doc = json.loads((project / "reports" / "tables" / "table3.provenance.json").read_text())
    served = doc["systems"]["mock/zero_shot"]["served"]["expert"]
    assert set(served["models"]) == {SERVED} and set(served["fingerprints"]) == {"mock-fp-1"}
    assert_no_secret(project)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_second_run_makes_no_request(warm: Warm) -> None:
    warm.mock.control.reset()
    out = run_ok(warm.project, env=job_env())
    assert "Nothing to be done" in out
    assert warm.mock.control.stats()["total_requests"] == 0
    assert_no_secret(warm.project)


# -- slow ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_injected_faults_are_retried_and_every_retry_is_accounted(tmp_path: Path) -> None:
    mock = Mock.spawn(faults={"rate_limit": 0.3, "server_error": 0.1})
    try:
        # 21 attempts: a request fails for good with probability 0.37**21, never in practice
        project = new_project(tmp_path, mock, max_retries=20)
        run_ok(project, env=job_env())
        stats = mock.control.stats()
    finally:
        mock.stop()
    faults = stats["faults"]
    assert faults.get("rate_limit", 0) > 0 and faults.get("server_error", 0) > 0, faults
    n_faults = sum(faults.values())
    transcripts = records(project, "transcripts")
    assert all(t["stop_reason"] in ("advice", "max_turns") for t in transcripts)
    assert all(m["status"] == "ok" for m in records(project, "matches"))
    assert all(j["status"] == "ok" for j in records(project, "judgements"))
    # each failed attempt was retried once, logged by its job and counted in the records
    assert retry_log_lines(project) == n_faults
    assert retried_in_usage(project) == n_faults
    assert sum(u["retries"] for t in transcripts for u in t["usage"].values()) > 0
    usage = read_csv(project / "reports" / "tables" / "usage.csv")
    total = sum(int(r["retries"]) for r in usage if r["label"] == "all systems")
    assert total == n_faults
    cells = table3_cells(project)
    assert all(cells[(e, s, "overall")]["n"] == str(N_CASES) for e, s in LLM_SYSTEMS)
    assert_no_secret(project)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_persistent_fault_leaves_dialogues_in_error_and_a_rerun_retries_only_those(
    tmp_path: Path,
) -> None:
    (victim,) = select(load_cases(TEST_SET), N_CASES)[:1]
    mock = Mock.spawn()
    try:
        mock.control.set_faults({"server_error": 1.0}, roles=["expert"], match=victim.initial_query)
        project = new_project(tmp_path, mock, max_retries=2)
        run_ok(project, env=job_env())
        first = mock.control.stats()

        transcripts = records(project, "transcripts")
        failed = [t for t in transcripts if t["stop_reason"] == "error"]
        assert {t["case_id"] for t in failed} == {victim.id}
        assert len(failed) == len(LLM_SYSTEMS)
        assert all("server" in t["error"] and t["usage"]["expert"]["retries"] == 2 for t in failed)
        assert first["faults"] == {"server_error": 3 * len(LLM_SYSTEMS)}
        cells = table3_cells(project)
        for expert, strategy in LLM_SYSTEMS:
            for metric in ("recall", "rouge_l", "overall"):
                cell = cells[(expert, strategy, metric)]
                assert (cell["n"], cell["N"]) == (str(N_CASES - 1), str(N_CASES)), cell
        md = (project / "reports" / "tables" / "table3.md").read_text(encoding="utf-8")
        assert f"{N_CASES - 1}/{N_CASES}" in md
        errors_per_shard = {
            p.relative_to(project / "results" / "transcripts").with_suffix(""): sum(
                t["stop_reason"] == "error" for t in read_jsonl(p)
            )
            for p in (project / "results" / "transcripts").rglob("*.jsonl")
        }

        # the fault is gone: rerunning the simulations retries the failed dialogues only
        mock.control.set_faults({})
        mock.control.reset()
        run_ok(project, "--forcerun", "simulate", env=job_env())
        second = mock.control.stats()
    finally:
        mock.stop()
    for shard, n_err in errors_per_shard.items():
        log = (project / "logs" / "transcripts" / shard).with_suffix(".log").read_text("utf-8")
        assert f"{n_err} to simulate" in log, (shard, log)
    assert second["requests"].get("expert", 0) > 0
    assert not set(first["served"]) & {e["digest"] for e in second["log"]}
    assert all(t["stop_reason"] != "error" for t in records(project, "transcripts"))
    cells = table3_cells(project)
    assert all(cells[(e, s, "overall")]["n"] == str(N_CASES) for e, s in LLM_SYSTEMS)
    assert_no_secret(project)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_replay_regenerates_identical_tables_with_the_mock_stopped(warm: Warm) -> None:
    project = warm.project
    cold = table_bytes(project)
    # the whole DAG again from the warm response store: not one request reaches the endpoint
    wipe_outputs(project)
    warm.mock.control.reset()
    run_ok(project, env=job_env())
    assert warm.mock.control.stats()["total_requests"] == 0
    rerun = table_bytes(project)
    store_files = sorted(p for p in (project / "store" / "responses").rglob("*") if p.is_file())
    # endpoint gone, key gone, replay forced by the environment
    warm.mock.stop()
    wipe_outputs(project)
    run_ok(project, env=job_env(key=False, replay=True))
    replayed = table_bytes(project)
    assert replayed == rerun
    assert sorted(p for p in (project / "store" / "responses").rglob("*") if p.is_file()) == (
        store_files
    )
    # the results themselves equal those of the first (cold) run; only the run accounting
    # (cache hits) in usage.csv differs
    assert {"table2.csv", "table3.csv", "usage.csv"} <= set(replayed)
    for name in set(replayed) - {"usage.csv"}:
        assert replayed[name] == cold[name], name
    cold_usage = read_csv_bytes(cold["usage.csv"])
    replay_usage = read_csv_bytes(replayed["usage.csv"])
    assert [dict(r, cached="") for r in replay_usage] == [dict(r, cached="") for r in cold_usage]
    assert all(r["cached"] == r["calls"] for r in replay_usage)
    assert_no_secret(project)


def read_csv_bytes(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(data.decode("utf-8").splitlines()))


# -- scripts/gpu_check.sh on CPU (dry mode: the stand-in server plays `vllm serve`) ------------

GPU_CHECK = REPO / "scripts" / "gpu_check.sh"


def gpu_check(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LECODE_VLLM_COMMAND", "LECODE_GPU_MODEL", "OUT", "LECODE_REPLAY")
        and not k.startswith("GPU_CHECK_")
    }
    return subprocess.run(
        ["bash", str(GPU_CHECK), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )


def test_gpu_check_is_valid_shell() -> None:
    assert subprocess.run(["bash", "-n", str(GPU_CHECK)], check=False).returncode == 0
    if shutil.which("shellcheck"):
        lint = subprocess.run(["shellcheck", str(GPU_CHECK)], capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_gpu_check_dry_run_serves_the_expert_through_the_launcher(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = gpu_check(GPU_CHECK_DRY="1", GPU_CHECK_WORKDIR=str(tmp_path / "work"), OUT=str(out))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "GPU check: PASS" in run.stdout
    summary = json.loads((out / "gpu_check_summary.json").read_text(encoding="utf-8"))
    assert summary["ok"] and summary["consultations"] == summary["expected"] == 5
    assert summary["expert_calls"] > 0 and summary["reported_model"] == "gpu-expert"
    written = {p.name for p in out.iterdir()}
    assert {"gpu_check_summary.md", "table3.md", "vllm_server.log"} <= written
    project = tmp_path / "work" / "project"
    transcripts = records(project, "transcripts")
    assert len(transcripts) == 5
    assert {t["provenance"]["expert.backend"] for t in transcripts} == {"vllm"}
    assert not list((project / "store" / "servers").glob("*.json")), "the server was not stopped"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_gpu_check_fails_clearly(tmp_path: Path) -> None:
    missing = gpu_check(str(tmp_path / "no-such-model"), GPU_CHECK_DRY="1")
    assert missing.returncode != 0
    assert "does not exist (the weights must be brought" in missing.stderr
    dying = gpu_check(
        GPU_CHECK_DRY="1",
        GPU_CHECK_WORKDIR=str(tmp_path / "work"),
        LECODE_VLLM_COMMAND=f"{sys.executable} -c 'print(\"CUDA unavailable\"); exit(3)'",
    )
    assert dying.returncode != 0
    assert "CUDA unavailable" in dying.stderr and "the server did not start" in dying.stderr
    if not shutil.which("nvidia-smi"):
        no_gpu = gpu_check(str(tmp_path))
        assert no_gpu.returncode != 0 and "nvidia-smi not found" in no_gpu.stderr


# -- vLLM servers started on demand by the run's jobs, stopped by the Snakefile's hooks ---------


def served_url(output: str) -> str:
    match = re.search(r"vLLM server local (http://127\.0\.0\.1:\d+/v1)", output)
    assert match, output[-3000:]
    return match.group(1)


def is_serving(url: str) -> bool:
    try:
        return httpx.get(f"{url}/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_jobs_start_the_vllm_server_on_demand_and_the_hooks_stop_it(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    copy_project(project)
    (tmp_path / "model").mkdir()
    local = {"backend": "vllm", "model": "local", "model_path": str(tmp_path / "model"), "seed": 0}
    cfg: dict[str, Any] = {
        "dataset": {"n_shards": 2, "limit": 3},
        "models": {"local": local},
        "experts": [{"model": "local", "strategy": "zero_shot"}],
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"enabled": False}},
        "report": {"bootstrap": {"resamples": 200}},
    }
    (project / "llm.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    env = {
        **job_env(key=False),
        "LECODE_VLLM_COMMAND": STANDIN_COMMAND,
        "LECODE_MOCK_DATA": str(TEST_SET),
    }
    dry = snakemake(project, "all_tables", "-n", env=env)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert not (project / "store" / "servers").exists(), "a dry run started a server"
    out = run_ok(project, env=env)
    # the first simulation started it (one server for the run's jobs), the hook stopped it
    assert len(re.findall(r"vLLM server local http://\S+ \(local\) stopped", out)) == 1, out[-3000:]
    assert (project / "logs" / "vllm" / "local.log").read_text().count("stand-in serving") == 1
    transcripts = records(project, "transcripts")
    assert len(transcripts) == 3
    assert all(t["stop_reason"] in ("advice", "max_turns") for t in transcripts)
    assert {t["provenance"]["expert.backend"] for t in transcripts} == {"vllm"}
    assert not is_serving(served_url(out)), "the server outlived a successful run"
    assert not list((project / "store" / "servers").glob("*.json"))

    # a failing run stops it as well: an adapter the server does not serve (404, final), and
    # simulation.fail_on_error 0 turns the failed dialogues into a failed job
    cfg["models"]["broken"] = {"backend": "vllm", "server": "local", "model": "no-such-adapter"}
    cfg["experts"] = [{"model": "broken", "strategy": "zero_shot"}]
    cfg["simulation"]["fail_on_error"] = 0.0
    (project / "llm.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    run = snakemake(project, "all_tables", env=env)
    assert run.returncode != 0
    assert "TooManyErrors" in run.stdout + run.stderr
    assert not is_serving(served_url(run.stdout + run.stderr)), "the server outlived a failure"
    assert not list((project / "store" / "servers").glob("*.json"))
