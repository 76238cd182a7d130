"""The harness's own cost per LLM call, measured on response-store hits (no network).

A store is filled by simulating ``--dialogues`` cases with two LLM experts (zero_shot and mediq)
and an LLM client against the mock endpoint (no latency). Then, with the endpoint's request
count checked to stay at zero:

- ``per_hit``: ``Endpoint.complete`` alone, replaying every stored request sequentially
  (request key, store lookup, decoding of the stored response, ledger record);
- ``end_to_end``: the consultation loop again with a fresh dialogue journal, every call a
  store hit: prompt rendering, the call above, reply parsing, the roles' usage metering, the
  dialogue records and their journal (one fsync per dialogue). Loading the store is reported
  separately (once per job).

    .venv/bin/python benchmarks/call_overhead.py [--dialogues 200] [--repeat 3]

The best of ``--repeat`` runs is reported. The last line is ``ratio=<end_to_end/1ms>``: the
harness's time per call as a fraction of one millisecond (a real endpoint takes 100-10,000 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from common import check_outcomes, mock_endpoint, model_cfg, new_runtime, simulate_experts

from lecode.llm.store import SEGMENT_GLOB, decode_line


def stored_requests(store: Path) -> list[dict[str, Any]]:
    out = []
    for seg in sorted(store.rglob(SEGMENT_GLOB)):
        for line in seg.read_bytes().splitlines():
            decoded = decode_line(line)
            if decoded is not None:
                out.append(json.loads(decoded[1]))
    return out


def time_hits(store: Path, url: str, records: list[dict[str, Any]]) -> tuple[float, float]:
    """(seconds to load the store, seconds per ``complete`` on a hit)."""
    rt = new_runtime(store)
    endpoint = rt.endpoint("mock", model_cfg(url))
    started = time.perf_counter()
    rt.store.load_all()
    load_s = time.perf_counter() - started

    async def replay() -> float:
        t0 = time.perf_counter()
        for rec in records:
            done = await endpoint.complete(
                rec["request"]["messages"],
                role=rec["role"],
                purpose=rec["purpose"],
                template_hash=rec["template"],
                replicate=rec["replicate"],
            )
            if not done.cached:
                raise SystemExit("a stored request missed the store")
        return (time.perf_counter() - t0) / len(records)

    per_hit = asyncio.run(replay())
    rt.close()
    if rt.network_calls:
        raise SystemExit(f"{rt.network_calls} network calls on a warm store")
    return load_s, per_hit


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dialogues", type=int, default=200, help="cases per expert")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    with mock_endpoint(args.dialogues, latency=0.0) as ep:
        store = ep.workdir / "store"
        rt = new_runtime(store)
        warm = simulate_experts(ep, rt, journal_dir=ep.workdir / "journal-0", concurrency=16)
        rt.close()
        check_outcomes(warm.transcripts)
        records = stored_requests(store)
        ep.control.reset()

        loads, hits, e2e = [], [], []
        for k in range(args.repeat):
            load_s, per_hit = time_hits(store, ep.url, records)
            loads.append(load_s)
            hits.append(per_hit)
            rt = new_runtime(store)
            t0 = time.perf_counter()
            rt.store.load_all()
            loads.append(time.perf_counter() - t0)
            run = simulate_experts(
                ep, rt, journal_dir=ep.workdir / f"journal-{k + 1}", concurrency=16
            )
            rt.close()
            check_outcomes(run.transcripts)
            if run.network_calls:
                raise SystemExit(f"{run.network_calls} network calls on a warm store")
            e2e.append((run.seconds, run.role_calls))
        endpoint_calls = ep.control.stats()["total_requests"]
    if endpoint_calls:
        raise SystemExit(f"the endpoint saw {endpoint_calls} requests on a warm store")
    seconds, calls = min(e2e)
    per_call = seconds / calls
    print(f"stored_responses={len(records)} store_load_s={min(loads):.4f}")
    print(f"per_hit_us={1e6 * min(hits):.1f} (Endpoint.complete on a store hit)")
    print(
        f"end_to_end_us_per_call={1e6 * per_call:.1f} ({calls} calls in {seconds:.3f}s, "
        f"{len(warm.transcripts)} dialogues, consultation loop and journal included)"
    )
    print(f"ratio={per_call / 1e-3:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
