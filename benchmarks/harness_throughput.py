"""Throughput of the consultation harness against an endpoint with a fixed latency.

The mock endpoint (a child process on loopback) answers every call after ``--latency`` L
seconds; the harness may keep at most ``--concurrency`` C calls in flight (the model entry's
``concurrency``). No harness can exceed C / L calls per second, so measured / bound says how
much of the endpoint's capacity the harness uses. ``--dialogues`` cases are simulated with two
LLM experts (zero_shot and mediq) and an LLM client, built through the role registry and run
by ``lecode.evaluation.consultations.simulate_cases`` with their journals, against a fresh
response store.

    .venv/bin/python benchmarks/harness_throughput.py [--dialogues 200] [--latency 0.05]
        [--concurrency 16]

The last line is ``ratio=<measured/bound>`` (goal: >= 0.9).
"""

from __future__ import annotations

import argparse
import json
import sys

from common import check_outcomes, mock_endpoint, new_runtime, simulate_experts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dialogues", type=int, default=200, help="cases per expert")
    p.add_argument("--latency", type=float, default=0.05, help="seconds per call (L)")
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight (C)")
    p.add_argument("--max-turns", type=int, default=10)
    args = p.parse_args(argv)

    with mock_endpoint(args.dialogues, latency=args.latency) as ep:
        ledger = ep.workdir / "ledger.jsonl"
        rt = new_runtime(ep.workdir / "store", ledger=ledger)
        run = simulate_experts(
            ep,
            rt,
            journal_dir=ep.workdir / "journal",
            concurrency=args.concurrency,
            max_turns=args.max_turns,
        )
        rt.close()
        stats = ep.control.stats()
        endpoint_cpu = ep.cpu_seconds()
        calls_ledger = [json.loads(line) for line in ledger.read_text("utf-8").splitlines()]
        call_times = sorted(c["ts"] for c in calls_ledger if not c["cached"])
    check_outcomes(run.transcripts)
    calls = stats["total_requests"]
    if calls != run.network_calls:
        raise SystemExit(f"the mock counted {calls} calls, the harness {run.network_calls}")
    measured = calls / run.seconds
    print(f"dialogues={len(run.transcripts)} (2 experts x {args.dialogues})")
    print(f"calls={calls} seconds={run.seconds:.2f} max_inflight={stats['max_inflight']}")
    print(f"harness_cpu_ms_per_call={1000 * run.cpu_seconds / calls:.3f}")
    print(f"endpoint_cpu_ms_per_call={1000 * endpoint_cpu / calls:.3f}")
    print(f"latency_s={args.latency} concurrency={args.concurrency}")
    if args.latency <= 0:
        print(f"throughput_calls_per_s={measured:.1f} (no latency: no bound)")
        return 0
    bound = args.concurrency / args.latency
    # Until fewer than C dialogues are left, at least C calls are always ready to be sent; after
    # that the bound cannot be reached by any harness (the last dialogues' remaining turns are
    # sequential). The steady-state ratio isolates the harness from that tail.
    ends = sorted(run.finished)
    n_left_full = len(ends) - args.concurrency
    if n_left_full > 0:
        t_full = ends[n_left_full]
        steady_calls = sum(1 for t in call_times if t <= t_full)
        steady = steady_calls / (t_full - run.started)
        tail = ends[-1] - t_full
        print(
            f"steady_state_calls_per_s={steady:.1f} steady_ratio={steady / bound:.3f} "
            f"(first {t_full - run.started:.2f}s, {steady_calls} calls; tail {tail:.2f}s)"
        )
    print(f"throughput_calls_per_s={measured:.1f} bound_calls_per_s={bound:.1f}")
    print(f"ratio={measured / bound:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
