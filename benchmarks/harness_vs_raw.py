"""The harness against a bare HTTP client, sending the same requests to the same endpoint.

One run of the harness (``--dialogues`` cases x two LLM experts, zero_shot and mediq, and an
LLM client, built through the role builders and run by ``lecode.simulate.simulate_cases`` with
their journals, a fresh durable response store and a ledger) against the mock endpoint at
latency 0; then the exact request bodies of that run (rebuilt from the response store the way
the endpoint builds them, with the role headers the mock plays by) are sent again by a bare
``AsyncClient`` of the same HTTP library (``lecode.llm.http``: ``httpx2``, else ``httpx``) at
the same concurrency, to the same endpoint: no store, no ledger, no journal, no prompts, no
parsing, no dialogue dependencies (every body is ready at once). The mock counts request
bodies by digest: the replay must send exactly the multiset of bodies the harness sent.

    .venv/bin/python benchmarks/harness_vs_raw.py [--dialogues 200] [--concurrency 16]
        [--repeat 2] [--profile FILE]

Harness and raw runs alternate ``--repeat`` times; the best of each is compared. The last line
is ``ratio=<harness calls per s / raw calls per s>`` (goal: >= 0.8). ``--profile FILE`` writes
a cProfile of one extra harness run (``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import sys
import time
from collections import Counter
from pathlib import Path

from common import BENCH_KEY, check_outcomes, mock_endpoint, new_runtime
from common import simulate_experts as run_harness

from lecode.llm.http import lib as http
from lecode.llm.mock.server import body_digest
from lecode.llm.store import SEGMENT_GLOB, decode_line


def recorded_requests(store: Path) -> list[tuple[bytes, dict[str, str]]]:
    """(body, headers) of every request the harness sent, rebuilt from its response store:
    the body exactly as ``Endpoint._request`` serialises it, the role headers as it sends them."""
    out = []
    for seg in sorted(store.rglob(SEGMENT_GLOB)):
        for line in seg.read_bytes().splitlines():
            decoded = decode_line(line)
            if decoded is None:
                continue
            rec = json.loads(decoded[1])
            body = {"model": "mock", "messages": rec["request"]["messages"]}
            content = json.dumps({**body, **rec["request"]["decoding"]}, ensure_ascii=False)
            headers = {
                "Authorization": f"Bearer {BENCH_KEY}",
                "Content-Type": "application/json",
                "X-Lecode-Role": rec["role"],
                "X-Lecode-Purpose": rec["purpose"],
            }
            out.append((content.encode("utf-8"), headers))
    return out


async def raw_replay(
    url: str,
    requests: list[tuple[bytes, dict[str, str]]],
    concurrency: int,
    *,
    open_connections: int = 0,
) -> tuple[float, float, int]:
    """Send every request with a bare client, ``concurrency`` in flight; (seconds, CPU
    seconds of this process, replies). ``open_connections``: first open that many
    connections (untimed, with the first requests, sent again in the timed part)."""
    queue = list(reversed(requests))
    ok = 0

    async with http.AsyncClient(
        timeout=http.Timeout(30.0),
        limits=http.Limits(max_connections=1000, max_keepalive_connections=100),
    ) as client:
        await asyncio.gather(
            *(
                client.post(f"{url}/chat/completions", content=content, headers=headers)
                for content, headers in requests[:open_connections]
            )
        )

        async def worker() -> None:
            nonlocal ok
            while queue:
                content, headers = queue.pop()
                reply = await client.post(
                    f"{url}/chat/completions", content=content, headers=headers
                )
                reply.raise_for_status()
                json.loads(reply.content)["choices"][0]["message"]["content"]
                ok += 1

        started = time.perf_counter()
        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, time.process_time() - cpu, ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dialogues", type=int, default=200, help="cases per expert")
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight (C)")
    p.add_argument("--max-turns", type=int, default=10)
    p.add_argument("--repeat", type=int, default=2, help="harness/raw pairs; best of each")
    p.add_argument("--profile", type=Path, default=None, help="cProfile of one more harness run")
    p.add_argument(
        "--raw-inflight",
        type=int,
        default=0,
        help="diagnostic: one more raw replay with C connections opened first and only this "
        "many requests in flight (the pool as the CPU-bound harness leaves it)",
    )
    args = p.parse_args(argv)

    harness: list[float] = []
    raw: list[float] = []
    harness_cpu: list[float] = []
    raw_cpu: list[float] = []
    with mock_endpoint(args.dialogues, latency=0.0) as ep:

        def one_harness(k: int, profiler: cProfile.Profile | None = None) -> Counter[str]:
            ep.control.reset()
            rt = new_runtime(ep.workdir / f"store-{k}", ledger=ep.workdir / f"ledger-{k}.jsonl")
            if profiler is not None:
                profiler.enable()
            run = run_harness(
                ep,
                rt,
                journal_dir=ep.workdir / f"journal-{k}",
                concurrency=args.concurrency,
                max_turns=args.max_turns,
            )
            rt.close()
            if profiler is not None:
                profiler.disable()
            check_outcomes(run.transcripts)
            stats = ep.control.stats()
            if stats["total_requests"] != run.network_calls:
                raise SystemExit("the mock and the harness disagree on the number of calls")
            if profiler is None:
                harness.append(run.network_calls / run.seconds)
                harness_cpu.append(run.cpu_seconds / run.network_calls)
            return Counter(stats["served"])

        requests: list[tuple[bytes, dict[str, str]]] = []
        for k in range(args.repeat):
            # Two dialogues may send the same request at the same moment (the client's answer
            # to the same question of the same case under both experts): both miss the store
            # and both are sent and stored, so a run's call count depends on timing by a few
            # calls. Each replay therefore sends the requests of the run just before it.
            sent = one_harness(k)
            requests = recorded_requests(ep.workdir / f"store-{k}")
            rebuilt = Counter(body_digest(json.loads(b)) for b, _ in requests)
            if rebuilt != sent:
                raise SystemExit("the rebuilt request bodies differ from the harness's")
            ep.control.reset()
            seconds, cpu, ok = asyncio.run(raw_replay(ep.url, requests, args.concurrency))
            raw_cpu.append(cpu / len(requests))
            replayed = Counter(ep.control.stats()["served"])
            if ok != len(requests) or replayed != sent:
                raise SystemExit(
                    f"the raw replay did not send the harness's requests: {ok} replies to "
                    f"{len(requests)} requests, {sum((replayed - sent).values())} extra and "
                    f"{sum((sent - replayed).values())} missing bodies"
                )
            raw.append(len(requests) / seconds)
        if args.raw_inflight:
            # the pool as the harness leaves it at latency 0: C connections open, few in flight
            ep.control.reset()
            seconds, cpu, _ = asyncio.run(
                raw_replay(ep.url, requests, args.raw_inflight, open_connections=args.concurrency)
            )
            print(
                f"raw_with_{args.concurrency}_open_{args.raw_inflight}_in_flight: "
                f"calls_per_s={len(requests) / seconds:.1f} "
                f"cpu_ms_per_call={1000 * cpu / len(requests):.3f}"
            )
        if args.profile is not None:
            profiler = cProfile.Profile()
            one_harness(args.repeat, profiler)
            profiler.dump_stats(args.profile)
            print(f"profile={args.profile}")

    calls = len(requests)
    print(f"calls={calls} per run ({2 * args.dialogues} dialogues), concurrency={args.concurrency}")
    print(f"http_library={http.__name__}")
    print("harness_calls_per_s=" + " ".join(f"{x:.1f}" for x in harness))
    print("raw_calls_per_s=" + " ".join(f"{x:.1f}" for x in raw))
    print(f"cpu_ms_per_call: harness={1000 * min(harness_cpu):.3f} raw={1000 * min(raw_cpu):.3f}")
    print(f"ratio={max(harness) / max(raw):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
