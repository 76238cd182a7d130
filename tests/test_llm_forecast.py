"""Dry-run forecast of calls, tokens and cost, and the mock-server command."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from lecode.cli.llm import main as llm_main
from lecode.mock import MockControl, spawn_mock
from tests.support.cases import synthetic_cases, write_jsonl


def test_forecast_counts_calls_per_role(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "test.jsonl", synthetic_cases(5))
    llm = {
        "backend": "openai",
        "base_url": "http://127.0.0.1:1/v1",
        "model": "m",
        "price": {"prompt": 1.0, "completion": 2.0},
    }
    params = {
        "dataset": {"train": str(data), "test": str(data), "n_shards": 1, "limit": 4},
        "models": {
            "gpt": llm,
            "judge": llm,
            "replay": {"backend": "offline", "agent": "human_replay"},
        },
        "experts": [
            {"model": "gpt", "strategy": "zero_shot"},
            {"model": "gpt", "strategy": "mediq"},
            {"model": "replay", "strategy": "baseline"},
        ],
        "client": {"model": "gpt", "strategy": "first_person_dialogue"},
        "matcher": {"model": "gpt"},
        "judge": {"model": "judge"},
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"model": "m", "num_layers": 1}},
    }
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True))
    assert llm_main(["forecast", "--params", str(path), "--json"]) == 0
    rows = {(r["role"], r["model"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    # zero_shot: 3 questions + advice = 4; mediq: 3 confidence + 3 asks + 1 advice = 7
    assert rows[("expert", "gpt")]["calls"] == 4 * (4 + 7)
    assert rows[("client", "gpt")]["calls"] == 4 * 3 * 3  # three experts, offline included
    assert rows[("matcher", "gpt")]["calls"] == 4 * 3
    assert rows[("judge", "judge")]["calls"] == 4 * 3
    assert all(r["prompt_tokens"] > 0 and r["cost"] > 0 for r in rows.values())
    assert llm_main(["forecast", "--params", str(path), "--questions", "1"]) == 0
    assert "total cost" in capsys.readouterr().out


def test_mock_server_command_runs_in_a_child_process(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "test.jsonl", synthetic_cases(2))
    proc, url = spawn_mock([data], faults={"rate_limit": 0.0})
    try:
        assert url.startswith("http://127.0.0.1:")
        models = httpx.get(f"{url}/models", timeout=5).json()
        assert models["data"][0]["id"] == "mock"
        control = MockControl(url)
        control.set_faults({"server_error": 1.0})
        r = httpx.post(
            f"{url}/chat/completions",
            timeout=5,
            json={"model": "mock", "messages": [{"role": "user", "content": "x"}]},
        )
        assert r.status_code == 500
        assert control.stats()["faults"] == {"server_error": 1}
        control.reset()
        assert control.stats()["total_requests"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_forecast_of_the_paper_configuration_at_the_real_test_set_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = Path(__file__).resolve().parent.parent
    args = ["forecast", "--params", str(repo / "params.yaml")]
    args += ["--params", str(repo / "configs/paper.yaml"), "--cases", "740", "--json"]
    assert llm_main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cases"] == 740
    experts = {r["model"] for r in out["rows"] if r["role"] == "expert"}
    assert {"gpt-4", "qwen2.5-7b", "deepseek-r1", "chatlaw"} <= experts
    few_and_zero = {r["model"]: r["calls"] for r in out["rows"] if r["role"] == "expert"}
    # zero-shot and few-shot: (10 questions + advice) x 740 cases each
    assert few_and_zero["gpt-4"] == 2 * 11 * 740
    assert {r["role"] for r in out["rows"]} == {"expert", "client", "matcher", "judge"}
    # without a GPU run the SFT rows are not run, so they cost nothing and say why
    sft = {"direct-sft", "keyfact-sft", "keyfact-e-sft"}
    assert not sft & experts and set(out["not_run"]) == sft
    # with the training overlay they are forecast like the others
    assert llm_main([*args, "--params", str(repo / "configs/sft.yaml")]) == 0
    trained = json.loads(capsys.readouterr().out)
    assert sft <= {r["model"] for r in trained["rows"] if r["role"] == "expert"}
    assert trained["not_run"] == {}


def test_the_forecast_prices_the_cached_share_measured_in_earlier_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lecode.config.models import model_entry
    from lecode.llm.keys import model_identity, partition_name
    from lecode.llm.spec import ModelSpec
    from lecode.llm.store import ResponseStore

    data = write_jsonl(tmp_path / "test.jsonl", synthetic_cases(3))
    price = {"prompt": 1.0, "completion": 2.0, "cached_prompt": 0.1}
    llm = {"backend": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m", "price": price}
    judge = {**llm, "model": "j"}
    params = {
        "dataset": {"train": str(data), "test": str(data), "n_shards": 1},
        "models": {"gpt": llm, "judge": judge},
        "experts": [{"model": "gpt", "strategy": "zero_shot"}],
        "client": {"model": "gpt", "strategy": "first_person_dialogue"},
        "matcher": {"model": "gpt"},
        "judge": {"model": "judge"},
        "simulation": {"max_turns": 2},
        "llm": {"store_dir": str(tmp_path / "store")},
        "metrics": {"bertscore": {"model": "m", "num_layers": 1}},
    }
    # earlier runs of gpt: 160 of 400 reported prompt tokens were cached (a response that does
    # not report cached tokens does not count); judge never reported any
    spec = ModelSpec.of("gpt", model_entry("gpt", llm))
    part = partition_name(model_identity(spec.name, spec.identity_url, spec.served_model))
    store = ResponseStore(tmp_path / "store")
    for i, (prompt, cached) in enumerate([(100, 60), (300, 100), (500, None)]):
        response = {"text": "x", "prompt_tokens": prompt, "completion_tokens": 1}
        if cached is not None:
            response["cached_prompt_tokens"] = cached
        store.put_sync(part, f"{i:064d}", {"key": f"{i:064d}", "response": response})
    store.close()
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True))
    argv = ["forecast", "--params", str(path), "--json", "--cached-share", "0.5"]
    assert llm_main(argv) == 0
    rows = {(r["role"], r["model"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    expert, judged = rows[("expert", "gpt")], rows[("judge", "judge")]
    assert (expert["cached_share"], judged["cached_share"]) == (0.4, 0.5)
    assert expert["cached_share_source"] == "measured over 2 stored responses"
    assert judged["cached_share_source"] == "assumed"
    for r in (expert, judged):
        p, c, k = r["prompt_tokens"], r["completion_tokens"], r["cached_prompt_tokens"]
        assert k == round(p * r["cached_share"])
        assert r["cost"] == pytest.approx(((p - k) * 1.0 + k * 0.1 + c * 2.0) / 1000, abs=1e-4)
    assert llm_main(["forecast", "--params", str(path)]) == 0
    text = capsys.readouterr().out
    assert "cached prompt share of gpt: 40% (measured over 2 stored responses" in text
    assert "cached prompt share of judge: 0% (assumed" in text
    assert llm_main(["forecast", "--params", str(path), "--cached-share", "1.5"]) == 2
