"""The vLLM launcher, with a stand-in command in place of ``vllm serve``."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import yaml

from lecode.cli.llm import main as llm_main
from lecode.llm.errors import LLMConfigError
from lecode.llm.spec import ModelSpec
from lecode.llm.vllm import (
    COMMAND_ENV,
    ServerState,
    build_command,
    resolve_base_url,
    specs_to_serve,
    start_server,
    stop_server,
)
from tests.support.mock_llm import entries, runtime
from tests.support.vllm_standin import COMMAND as STANDIN

MODELS = {
    "qwen7b": {
        "backend": "vllm",
        "model": "qwen7b",
        "model_path": "/models/Qwen2.5-7B-Instruct",
        "lora": {"keyfact_e": "/adapters/keyfact-e"},
        "serve_args": ["--max-model-len", "4096"],
        "seed": 0,
        "temperature": 0.7,
    },
    "qwen7b-keyfact-e": {"backend": "vllm", "server": "qwen7b", "model": "keyfact_e"},
}


def test_command_line() -> None:
    spec = ModelSpec.from_config("qwen7b", MODELS["qwen7b"])
    cmd = build_command(spec, 8123, prefix=["vllm", "serve"])
    assert cmd[:3] == ["vllm", "serve", "/models/Qwen2.5-7B-Instruct"]
    joined = " ".join(cmd)
    assert "--host 127.0.0.1 --port 8123" in joined
    assert "--served-model-name qwen7b" in joined
    assert "--enable-lora --lora-modules keyfact_e=/adapters/keyfact-e" in joined
    assert joined.endswith("--max-model-len 4096")
    assert [s.name for s in specs_to_serve(entries(MODELS), ["qwen7b-keyfact-e"])] == ["qwen7b"]


def test_start_route_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(COMMAND_ENV, STANDIN)
    spec = ModelSpec.from_config("qwen7b", MODELS["qwen7b"])
    state = start_server(spec, tmp_path / "servers", health_timeout=60, poll=0.1)
    try:
        assert state.base_url.startswith("http://127.0.0.1:")
        assert resolve_base_url("qwen7b", tmp_path / "servers") == state.base_url
        # a second start reuses the healthy server
        assert start_server(spec, tmp_path / "servers", health_timeout=60).pid == state.pid
        rt = runtime(tmp_path / "store", servers_dir=tmp_path / "servers", models=entries(MODELS))
        lora = rt.endpoint("qwen7b-keyfact-e", rt.models["qwen7b-keyfact-e"])
        base = rt.endpoint("qwen7b", rt.models["qwen7b"])
        assert lora.address == base.address == "vllm:///models/Qwen2.5-7B-Instruct"

        async def ask() -> list[str]:
            out = []
            for c in (base, lora):
                r = await c.complete(
                    [{"role": "user", "content": "你好"}],
                    role="expert",
                    purpose="turn",
                    template_hash="t",
                )
                out.append(r.model)
            return out

        assert asyncio.run(ask()) == ["qwen7b", "keyfact_e"]
        rt.close()
    finally:
        assert stop_server("qwen7b", tmp_path / "servers", grace=10)
    assert not (tmp_path / "servers" / "qwen7b.json").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(state.pid, 0)
    with pytest.raises(LLMConfigError, match="lecode serve start"):
        resolve_base_url("qwen7b", tmp_path / "servers")


def test_a_server_that_dies_is_reported_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        COMMAND_ENV, f"{sys.executable} -c 'import sys; print(\"boom\"); sys.exit(3)'"
    )
    spec = ModelSpec.from_config("qwen7b", MODELS["qwen7b"])
    with pytest.raises(LLMConfigError, match="boom"):
        start_server(spec, tmp_path / "servers", health_timeout=30, poll=0.1)
    assert not (tmp_path / "servers" / "qwen7b.json").exists()


def test_a_server_that_never_gets_healthy_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMMAND_ENV, f"{sys.executable} -c 'import time; time.sleep(60)' --")
    spec = ModelSpec.from_config("qwen7b", MODELS["qwen7b"])
    with pytest.raises(LLMConfigError, match="not healthy"):
        start_server(spec, tmp_path / "servers", health_timeout=1.0, poll=0.2)
    assert not (tmp_path / "servers" / "qwen7b.json").exists()


def test_serve_cli_start_status_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(COMMAND_ENV, STANDIN)
    params = tmp_path / "params.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "models": MODELS,
                "experts": [{"model": "qwen7b-keyfact-e", "strategy": "zero_shot"}],
                "client": {"model": "qwen7b", "strategy": "first_person_dialogue"},
                "llm": {"store_dir": str(tmp_path / "store" / "responses")},
            }
        )
    )
    base = Path(__file__).resolve().parent.parent / "params.yaml"
    args = ["--params", str(base), "--params", str(params), "--log-dir", str(tmp_path / "logs")]
    assert llm_main(["serve", "start", *args, "--timeout", "60"]) == 0
    state = ServerState.read(tmp_path / "store" / "servers" / "qwen7b.json")
    assert llm_main(["serve", "status", *args]) == 0
    assert llm_main(["serve", "stop", *args]) == 0
    out = capsys.readouterr().out
    assert state.base_url in out and "stopped vLLM server qwen7b" in out
    with pytest.raises(ProcessLookupError):
        os.kill(state.pid, 0)
