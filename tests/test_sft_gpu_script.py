"""scripts/gpu_sft_check.sh, as far as a CPU allows: syntax, the consultation driver against a
local OpenAI-compatible stand-in, and (slow) the whole script in its dry mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lecode.sft import gpucheck

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts/gpu_sft_check.sh"


def test_the_script_parses() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


class Lawyer(BaseHTTPRequestHandler):
    """Asks one question per consultation, then advises; counts what it was sent."""

    requests: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Lawyer.requests.append(body)
        user = body["messages"][-1]["content"]
        reply = "建议：尽快咨询当地律师。" if "律师：" in user else "提问：对方伤得重吗？"
        out = json.dumps(
            {"choices": [{"message": {"content": reply}}], "usage": {"completion_tokens": 7}},
            ensure_ascii=False,
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def test_consultations_against_a_served_model(capsys: pytest.CaptureFixture[str]) -> None:
    Lawyer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Lawyer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        gpucheck.consult(url, "sft", cases=2, max_turns=3, max_tokens=32)
    finally:
        server.shutdown()
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(gpucheck.PREFIX)
    result = json.loads(line[len(gpucheck.PREFIX) :])
    assert result["consultations"] == 2 and result["completion_tokens"] == 4 * 7
    assert [t["stop"] for t in result["transcripts"]] == ["advice", "advice"]
    assert all(r["model"] == "sft" for r in Lawyer.requests)
    system = Lawyer.requests[0]["messages"][0]["content"]
    assert "提问：" in system and "最多提问 3 次" in system  # the zero-shot expert prompt


@pytest.mark.slow
def test_dry_run_trains_and_generates(tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="optional extra 'sft' not installed")
    env = {
        **os.environ,
        "GPU_SFT_DRY": "1",
        "GPU_SFT_WORKDIR": str(tmp_path / "w"),
        "OUT": str(tmp_path / "out"),
        "LECODE_SFT_PYTHON": sys.executable,
    }
    run = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "time per training step:" in run.stdout and "tokens/s:" in run.stdout
    summary = json.loads((tmp_path / "out/gpu_sft_check.json").read_text())
    assert summary["dry_run"] and summary["train_steps"] == 2 and summary["tokens_per_s"] > 0
    assert (tmp_path / "w/train/adapter/adapter_model.safetensors").is_file()
