"""The benchmark that decides the HTTP library still runs: a tiny harness_vs_raw.py run checks
its own invariants (the replays send exactly the harness's request bodies) and prints its
ratios. Its numbers are not judged here: performance is read from the ratios of full runs
(``benchmarks/README.md``), never from a timed test."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO


def test_harness_vs_raw_replays_the_harness_requests_and_prints_its_ratios() -> None:
    proc = subprocess.run(
        [sys.executable, "benchmarks/harness_vs_raw.py", "--dialogues", "2", "4", "--repeat", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for dialogues in (4, 8):  # two queue lengths, each measured
        tag = re.escape(f"[{dialogues} dialogues] ")
        calls = int(re.search(rf"^{tag}calls=(\d+) per run", out, re.M).group(1))
        assert calls > dialogues  # every dialogue makes several calls
        for name in ("harness", "bare_httpx2", "bare_aiohttp"):
            assert float(re.search(rf"^{tag}{name}_calls_per_s=([\d.]+)$", out, re.M).group(1))
        assert float(re.search(rf"^{tag}same_library_ratio=([\d.]+)$", out, re.M).group(1)) > 0
    assert float(re.search(r"^cpu_growth=([\d.]+) ", out, re.M).group(1)) > 0
    assert out.rstrip().splitlines()[-1].startswith("ratio=")
