"""First run against the endpoint versus a rerun on the warm response store.

The first run simulates ``--dialogues`` cases with two LLM experts (zero_shot and mediq) and an
LLM client against the mock endpoint (``--latency`` seconds per call, ``--concurrency`` calls in
flight), filling a fresh response store. The rerun builds a new runtime on the same store and
simulates the same dialogues again with an empty dialogue journal, so every call goes through
the store (a rerun with the journal kept would not call the LLM layer at all). Both timings
include building the runtime (loading the store) and the roles. The rerun must make no network
call: the harness's count and the endpoint's count are both checked.

    .venv/bin/python benchmarks/warm_rerun.py [--dialogues 50] [--latency 0.5]
        [--concurrency 16]

The last line is ``ratio=<first/rerun>`` (goal: >= 50). The first run takes about
calls x latency / concurrency, the rerun calls x (the harness's cost per call, about 0.1-0.3 ms
here, see call_overhead.py), so the ratio grows with latency / concurrency: 0.5 s per call with
16 in flight is still quicker than hosted chat models answer.
"""

from __future__ import annotations

import argparse
import sys
import time

from common import Run, check_outcomes, mock_endpoint, new_runtime, simulate_experts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dialogues", type=int, default=50, help="cases per expert")
    p.add_argument("--latency", type=float, default=0.5, help="seconds per call")
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight")
    args = p.parse_args(argv)

    with mock_endpoint(args.dialogues, latency=args.latency) as ep:
        store = ep.workdir / "store"

        def timed(journal: str) -> tuple[Run, float]:
            """A run with a fresh runtime on the same store and its own journal."""
            t0 = time.perf_counter()
            rt = new_runtime(store)
            run = simulate_experts(
                ep, rt, journal_dir=ep.workdir / journal, concurrency=args.concurrency
            )
            rt.close()
            return run, time.perf_counter() - t0

        first, first_s = timed("journal-1")
        ep.control.reset()
        again, again_s = timed("journal-2")
        endpoint_calls = ep.control.stats()["total_requests"]
    check_outcomes(first.transcripts)
    check_outcomes(again.transcripts)
    if again.network_calls or endpoint_calls:
        raise SystemExit(
            f"the rerun made network calls: harness {again.network_calls}, "
            f"endpoint {endpoint_calls}"
        )
    same = [a.model_dump(exclude={"usage"}) for a in again.transcripts] == [
        f.model_dump(exclude={"usage"}) for f in first.transcripts
    ]
    if not same:
        raise SystemExit("the rerun's transcripts differ from the first run's")
    print(f"dialogues={len(first.transcripts)} (2 experts x {args.dialogues})")
    print(f"latency_s={args.latency} concurrency={args.concurrency}")
    print(f"first_run: calls={first.network_calls} seconds={first_s:.3f}")
    print(
        f"rerun: role_calls={again.role_calls} network_calls={again.network_calls} "
        f"endpoint_calls={endpoint_calls} seconds={again_s:.3f} "
        f"({1e6 * again_s / again.role_calls:.0f} us per call, store load included)"
    )
    print(f"ratio={first_s / again_s:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
