"""API keys never reach a file, log line, record or error message."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.llm.errors import LLMCallError, LLMConfigError
from lecode.llm.secrets import redact, register_secret
from lecode.llm.spec import ModelSpec
from lecode.mock import MockServer
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime, simulate

SECRET = "sk-live-9f8e7d6c5b4a3210zyxw"


def test_redact_masks_registered_values_and_credential_shapes() -> None:
    register_secret("plain-secret-value")
    text = redact(
        "a plain-secret-value b Bearer abcdefgh12345678 c sk-abcdefghijkl api_key=xyz12345678"
    )
    for leaked in ("plain-secret-value", "abcdefgh12345678", "sk-abcdefghijkl", "xyz12345678"):
        assert leaked not in text


def test_keys_are_never_read_from_configuration() -> None:
    with pytest.raises(LLMConfigError):
        ModelSpec.from_config(
            "m", {"backend": "openai", "base_url": "x", "model": "m", "api_key": SECRET}
        )
    raw = {"models": {"m": {"backend": "openai", "base_url": "x", "model": "m", "api_key": SECRET}}}
    with pytest.raises(SettingsError, match="models.m: .*name it with api_key_env") as info:
        Settings.parse(raw)
    assert SECRET not in str(info.value)


def test_missing_key_variable_is_named_not_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    spec = ModelSpec.from_config(
        "m", {"backend": "openai", "base_url": "x", "model": "m", "api_key_env": "NOT_SET_KEY"}
    )
    with pytest.raises(LLMConfigError, match="NOT_SET_KEY"):
        spec.api_key()


def test_secret_never_appears_in_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    from lecode.dataset import load_cases

    data = write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(3))
    cases = load_cases(data)
    caplog.set_level(logging.DEBUG)
    with MockServer(case_files=[data], api_key=SECRET) as mock:
        rt = runtime(tmp_path / "store", ledger_path=tmp_path / "ledger.jsonl")
        transcripts = asyncio.run(simulate(cases, rt, model_cfg(mock.url)))
        assert all(t.stop_reason == "advice" for t in transcripts)  # the key was sent and accepted
        provenance = rt.endpoint("mock-expert", model_cfg(mock.url))
        # a 401 whose body echoes the Authorization header
        mock.set_faults({"unauthorized_echo": 1.0})
        rt2 = runtime(tmp_path / "store2", ledger_path=tmp_path / "ledger2.jsonl")
        failed = asyncio.run(simulate(cases[:1], rt2, model_cfg(mock.url)))
        rt.close()
        rt2.close()
    assert failed[0].stop_reason == "error"
    assert "401" in (failed[0].error or "")
    texts = [t.model_dump_json() for t in [*transcripts, *failed]]
    texts += [r.getMessage() for r in caplog.records]
    texts += [str(provenance.spec), repr(provenance.spec)]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    assert all(SECRET not in t for t in texts)
    assert any("[REDACTED]" in t for t in texts)  # the echoed key was masked, not dropped


def test_error_message_of_failed_call_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with MockServer(faults={"unauthorized_echo": 1.0}) as mock:
        rt = runtime(tmp_path / "store")
        endpoint = rt.endpoint("m", model_cfg(mock.url))
        with pytest.raises(LLMCallError) as info:
            asyncio.run(
                endpoint.complete(
                    [{"role": "user", "content": "x"}],
                    role="judge",
                    purpose="judge",
                    template_hash="t",
                )
            )
    assert SECRET not in str(info.value) and "[REDACTED]" in str(info.value)
