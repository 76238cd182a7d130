"""vLLM servers started on demand by the jobs of a run, one per entry under a lock; LoRA
entries identified by their adapter. The stand-in server plays ``vllm serve``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.llm.errors import LLMConfigError
from lecode.llm.vllm import (
    COMMAND_ENV,
    SERVE_ENV,
    ServerState,
    ensure_base_url,
    serving_enabled,
    stop_all,
)
from tests.support.mock_llm import entries, runtime
from tests.support.vllm_standin import COMMAND as STANDIN

REPO = Path(__file__).resolve().parent.parent
TEST_SET = REPO / "data" / "sample" / "sample_testset.jsonl"

MODELS = {
    "qwen7b": {
        "backend": "vllm",
        "model": "qwen7b",
        "model_path": "/models/Qwen2.5-7B-Instruct",
        "lora": {"keyfact-sft": "/adapters/keyfact-sft"},
        "seed": 0,
        "temperature": 0.7,
    },
    "keyfact-sft": {"backend": "vllm", "server": "qwen7b", "model": "keyfact-sft", "seed": 0},
}

ENSURE = textwrap.dedent(
    """
    import json, sys
    from lecode.config.models import model_entry
    from lecode.llm.vllm import ensure_base_url
    raw, servers, logs = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
    models = {k: model_entry(k, v) for k, v in raw.items()}
    print(ensure_base_url("qwen7b", models, servers, log_dir=logs, health_timeout=60))
    """
)


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(COMMAND_ENV, STANDIN)
    monkeypatch.setenv("LECODE_MOCK_DATA", str(TEST_SET))
    monkeypatch.delenv(SERVE_ENV, raising=False)
    path = tmp_path / "servers"
    yield path
    stop_all(path)


@pytest.mark.timeout(180)
def test_two_jobs_asking_at_once_start_exactly_one_server(servers: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        SERVE_ENV: str(servers),
        # a slow start-up: without the lock both jobs would find no server and start one each
        "LECODE_STANDIN_DELAY": "1.5",
    }
    logs = tmp_path / "logs"
    args = [sys.executable, "-c", ENSURE, json.dumps(MODELS), str(servers), str(logs)]
    jobs = [
        subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [j.communicate(timeout=120) for j in jobs]
    assert all(j.returncode == 0 for j in jobs), [err[-2000:] for _, err in outs]
    urls = {out.strip() for out, _ in outs}
    state = ServerState.read(servers / "qwen7b.json")
    assert urls == {state.base_url}
    started = (logs / "qwen7b.log").read_text(encoding="utf-8").count("stand-in serving")
    assert started == 1, (logs / "qwen7b.log").read_text(encoding="utf-8")
    assert stop_all(servers) == ["qwen7b"]


def test_without_on_demand_serving_nothing_starts_and_the_entry_is_named(servers: Path) -> None:
    for environ in ({}, {SERVE_ENV: str(servers.parent / "elsewhere")}):
        assert not serving_enabled(servers, environ)
        with pytest.raises(
            LLMConfigError, match="no vLLM server is running for model entry 'qwen7b'"
        ):
            ensure_base_url("qwen7b", entries(MODELS), servers, environ=environ)
    assert not list(servers.glob("*.json")) if servers.exists() else True


def test_replay_never_starts_a_server(servers: Path) -> None:
    with pytest.raises(LLMConfigError, match="replay mode"):
        ensure_base_url(
            "qwen7b", entries(MODELS), servers, replay=True, environ={SERVE_ENV: str(servers)}
        )
    assert not servers.exists() or not list(servers.glob("*.json"))


@pytest.mark.timeout(120)
def test_a_job_starts_the_server_on_its_first_request(servers: Path, tmp_path: Path) -> None:
    rt = runtime(
        tmp_path / "store",
        servers_dir=servers,
        models=entries(MODELS),
        environ={**os.environ, SERVE_ENV: str(servers)},
    )
    lora = rt.endpoint("keyfact-sft", rt.models["keyfact-sft"])
    assert not servers.exists() or not list(servers.glob("*.json"))  # nothing before a request

    async def ask() -> str | None:
        r = await lora.complete(
            [{"role": "user", "content": "你好"}], role="expert", purpose="turn", template_hash="t"
        )
        return r.model

    try:
        assert asyncio.run(ask()) == "keyfact-sft"
        assert (servers / "qwen7b.json").exists()
    finally:
        rt.close()
        stop_all(servers)


def test_a_published_adapter_of_other_settings_is_refused(tmp_path: Path) -> None:
    adapter = tmp_path / "lora" / "keyfact-sft"
    adapter.mkdir(parents=True)
    models = {
        **MODELS,
        "qwen7b": {**MODELS["qwen7b"], "lora": {"keyfact-sft": str(adapter)}},
    }
    rt = runtime(
        tmp_path / "store", models=entries(models), adapters={"keyfact-sft": "train:aaaaaaaaaa"}
    )
    try:
        with pytest.raises(LLMConfigError, match="models.keyfact-sft.*no readable"):
            rt.check_adapter("keyfact-sft")
        (adapter / "lecode_provenance.json").write_text(json.dumps({"spec": "bbbbbbbbbb"}))
        with pytest.raises(LLMConfigError) as err:
            rt.check_adapter("keyfact-sft")
        assert "models.keyfact-sft" in str(err.value)
        assert "bbbbbbbbbb" in str(err.value) and "aaaaaaaaaa" in str(err.value)
        (adapter / "lecode_provenance.json").write_text(json.dumps({"spec": "aaaaaaaaaa"}))
        rt.check_adapter("keyfact-sft")  # the adapter this evaluation is identified by
        rt.check_adapter("qwen7b")  # no adapter: nothing to check
    finally:
        rt.close()


# -- request keys -------------------------------------------------------------------------------

KEY_MODELS = entries(
    {
        "api": {
            "backend": "openai",
            "base_url": "https://api.example.com/v1",
            "model": "m-1",
            "temperature": 0.7,
            "seed": 3,
        },
        "base": {
            "backend": "vllm",
            "model": "base",
            "model_path": "/models/Base-7B",
            "lora": {"tuned": "/adapters/tuned"},
            "seed": 0,
            "temperature": 0.7,
        },
        "tuned": {"backend": "vllm", "server": "base", "model": "tuned", "seed": 0},
    }
)
MESSAGES = [{"role": "system", "content": "你是律师"}, {"role": "user", "content": "我被拖欠工资"}]
#: Keys of these entries as stores written before adapter identities hold them.
KEYS = {
    "api": "e0ac1037f5db0b351899fcd7449aded46cbac494e3d2144e403232b4f73d9ae3",
    "base": "3eb8b63f0098e0320d29995e77037a9dfe7fa194209c1c8270a66e9343ab0916",
    "tuned": "1faadedfed7b920ce117d72bcb011b2d1d5a462a131b5fc2e97d4a144ffbcba2",
}


def test_request_keys_of_entries_without_adapters_are_unchanged(tmp_path: Path) -> None:
    rt = runtime(tmp_path / "store", models=KEY_MODELS)
    try:
        for name, cfg in KEY_MODELS.items():
            key = rt.endpoint(name, cfg).key_for(MESSAGES, template_hash="tmpl")
            assert key == KEYS[name], name
    finally:
        rt.close()


def test_the_adapter_identity_names_a_lora_entrys_requests(tmp_path: Path) -> None:
    keys = {}
    for adapter in ("train:1111111111", "train:2222222222"):
        rt = runtime(tmp_path / adapter, models=KEY_MODELS, adapters={"tuned": adapter})
        try:
            tuned = rt.endpoint("tuned", KEY_MODELS["tuned"])
            base = rt.endpoint("base", KEY_MODELS["base"])
            keys[adapter] = tuned.key_for(MESSAGES, template_hash="tmpl")
            assert base.key_for(MESSAGES, template_hash="tmpl") == KEYS["base"]
            assert tuned.spec.adapter == adapter
            assert tuned.identity["base_url"] == f"vllm:///models/Base-7B#lora={adapter}"
            # one server: the adapter entry shares the base entry's concurrency limit
            assert rt.limits.limit(tuned.address) == rt.limits.limit(base.address)
            # and the transcripts' provenance names the adapter (expert.adapter)
            ctx = RoleContext(runtime=rt)
            expert = build_expert("tuned", KEY_MODELS["tuned"], "zero_shot", ctx)
            assert expert.describe()["adapter"] == adapter
            assert (
                "adapter"
                not in build_expert("base", KEY_MODELS["base"], "zero_shot", ctx).describe()
            )
        finally:
            rt.close()
    assert len({*keys.values(), KEYS["tuned"]}) == 3
