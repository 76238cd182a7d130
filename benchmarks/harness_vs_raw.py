"""The harness against a bare HTTP client, sending the same requests to the same endpoint.

One run of the harness (``--dialogues`` cases x two LLM experts, zero_shot and mediq, and an LLM
client, built through the role builders and run by
``lecode.evaluation.consultations.simulate_cases`` with their journals, a fresh durable response
store and a ledger) against the mock endpoint at latency 0; then the exact request bodies of
that run (rebuilt from the response store the way the endpoint builds them, with the role
headers the mock plays by) are sent again by two bare clients at the same concurrency, to the
same endpoint: an ``httpx2.AsyncClient`` (the reference client of the goal) and an
``aiohttp.ClientSession`` (the library the harness itself uses, :mod:`lecode.llm.http`). No
store, no ledger, no journal, no prompts, no parsing, no dialogue dependencies (every body is
ready at once). The mock counts request bodies by digest: each replay must send exactly the
multiset of bodies the harness sent.

    .venv/bin/python benchmarks/harness_vs_raw.py [--dialogues 50 800] [--concurrency 16]
        [--repeat 2] [--profile FILE]

Each ``--dialogues`` value is one measurement (by default 50 and 800 cases per expert: 100
and 1,600 dialogues waiting in one job), so that a harness whose cost per call grows with the
queue shows it: ``cpu_growth=`` is the harness's CPU per call at the largest over the smallest
(goal <= 1.3). Harness and raw runs alternate ``--repeat`` times; the best of each is compared.
``same_library_ratio=`` is harness calls per s / bare ``aiohttp`` calls per s (what the
harness's own work costs); the last line is ``ratio=<harness calls per s / bare httpx2 calls
per s>`` at the largest queue (goal: >= 0.8). ``--profile FILE`` writes a cProfile of one
extra harness run per queue length (``python -m pstats FILE-<cases>``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import httpx2
from common import BENCH_KEY, check_outcomes, mock_endpoint, new_runtime
from common import simulate_experts as run_harness

from lecode.llm.store import SEGMENT_GLOB, decode_line
from lecode.mock.server import body_digest


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


Request = tuple[bytes, dict[str, str]]
Send = Callable[[bytes, dict[str, str]], Awaitable[None]]


async def replay(
    send: Send, requests: list[Request], concurrency: int, *, warm: int = 0
) -> tuple[float, float, int]:
    """Send every request through ``send``, ``concurrency`` in flight; (seconds, CPU seconds
    of this process, replies). ``warm``: first send that many requests at once, untimed, so
    that many connections are open (they are sent again in the timed part)."""
    queue = list(reversed(requests))
    ok = 0
    await asyncio.gather(*(send(content, headers) for content, headers in requests[:warm]))

    async def worker() -> None:
        nonlocal ok
        while queue:
            content, headers = queue.pop()
            await send(content, headers)
            ok += 1

    started = time.perf_counter()
    cpu = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, time.process_time() - cpu, ok


async def httpx2_replay(
    url: str, requests: list[Request], concurrency: int, *, warm: int = 0
) -> tuple[float, float, int]:
    """The replay with a bare ``httpx2.AsyncClient``: post, check the status, read the text."""
    async with httpx2.AsyncClient(
        timeout=httpx2.Timeout(30.0),
        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
    ) as client:

        async def send(content: bytes, headers: dict[str, str]) -> None:
            reply = await client.post(f"{url}/chat/completions", content=content, headers=headers)
            reply.raise_for_status()
            json.loads(reply.content)["choices"][0]["message"]["content"]

        return await replay(send, requests, concurrency, warm=warm)


async def aiohttp_replay(
    url: str, requests: list[Request], concurrency: int
) -> tuple[float, float, int]:
    """The same with a bare ``aiohttp.ClientSession``."""
    async with aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=30.0), connector=aiohttp.TCPConnector(limit=0)
    ) as session:

        async def send(content: bytes, headers: dict[str, str]) -> None:
            async with session.post(
                f"{url}/chat/completions", data=content, headers=headers
            ) as reply:
                reply.raise_for_status()
                json.loads(await reply.read())["choices"][0]["message"]["content"]

        return await replay(send, requests, concurrency)


REPLAYS = {"httpx2": httpx2_replay, "aiohttp": aiohttp_replay}


@dataclass
class Measured:
    """One queue length's result: best rates and CPU per call of each contender."""

    dialogues: int
    concurrency: int
    calls: int
    harness: list[float]
    harness_cpu: list[float]
    raw: dict[str, list[float]]
    raw_cpu: dict[str, list[float]]


def measure(cases: int, args: argparse.Namespace) -> Measured:
    """The harness and the bare clients on ``cases`` cases per expert (``2 * cases``
    dialogues waiting in one job)."""
    harness: list[float] = []
    harness_cpu: list[float] = []
    raw: dict[str, list[float]] = {name: [] for name in REPLAYS}
    raw_cpu: dict[str, list[float]] = {name: [] for name in REPLAYS}
    with mock_endpoint(cases, latency=0.0) as ep:

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

        requests: list[Request] = []
        for k in range(args.repeat):
            # Two dialogues may send the same request at the same moment (the client's answer
            # to the same question of the same case under both experts): both miss the store
            # and both are sent, and the store keeps the first (lecode.llm.store), so a run's
            # call count depends on timing by a few calls. Each replay therefore sends the
            # requests of the run just before it, each as many times as the mock served it.
            sent = one_harness(k)
            by_body = {
                body_digest(json.loads(b)): (b, h)
                for b, h in recorded_requests(ep.workdir / f"store-{k}")
            }
            if by_body.keys() != sent.keys():
                raise SystemExit("the rebuilt request bodies differ from the harness's")
            requests = [req for d, req in by_body.items() for _ in range(sent[d])]
            for name, run_replay in REPLAYS.items():
                ep.control.reset()
                seconds, cpu, ok = asyncio.run(run_replay(ep.url, requests, args.concurrency))
                replayed = Counter(ep.control.stats()["served"])
                if ok != len(requests) or replayed != sent:
                    raise SystemExit(
                        f"the {name} replay did not send the harness's requests: {ok} replies "
                        f"to {len(requests)} requests, {sum((replayed - sent).values())} extra "
                        f"and {sum((sent - replayed).values())} missing bodies"
                    )
                raw[name].append(len(requests) / seconds)
                raw_cpu[name].append(cpu / len(requests))
        if args.raw_inflight:
            ep.control.reset()
            seconds, cpu, _ = asyncio.run(
                httpx2_replay(ep.url, requests, args.raw_inflight, warm=args.concurrency)
            )
            print(
                f"httpx2_with_{args.concurrency}_open_{args.raw_inflight}_in_flight: "
                f"calls_per_s={len(requests) / seconds:.1f} "
                f"cpu_ms_per_call={1000 * cpu / len(requests):.3f}"
            )
        if args.profile is not None:
            profiler = cProfile.Profile()
            one_harness(args.repeat, profiler)
            profile = args.profile.with_name(f"{args.profile.stem}-{cases}{args.profile.suffix}")
            profiler.dump_stats(profile)
            print(f"profile={profile}")
    return Measured(2 * cases, args.concurrency, len(requests), harness, harness_cpu, raw, raw_cpu)


def report(m: Measured) -> None:
    """The lines of one queue length, each prefixed with its number of dialogues."""
    tag = f"[{m.dialogues} dialogues]"
    print(f"{tag} calls={m.calls} per run, concurrency={m.concurrency}")
    print(f"{tag} harness_calls_per_s=" + " ".join(f"{x:.1f}" for x in m.harness))
    for name in REPLAYS:
        print(f"{tag} bare_{name}_calls_per_s=" + " ".join(f"{x:.1f}" for x in m.raw[name]))
    cpu = " ".join(f"bare_{name}={1000 * min(m.raw_cpu[name]):.3f}" for name in REPLAYS)
    print(f"{tag} cpu_ms_per_call: harness={1000 * min(m.harness_cpu):.3f} {cpu}")
    print(f"{tag} same_library_ratio={max(m.harness) / max(m.raw['aiohttp']):.3f}")
    print(f"{tag} ratio={max(m.harness) / max(m.raw['httpx2']):.3f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--dialogues",
        type=int,
        nargs="+",
        default=[50, 800],
        help="cases per expert, one measurement each (two experts: twice as many dialogues)",
    )
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight (C)")
    p.add_argument("--max-turns", type=int, default=10)
    p.add_argument("--repeat", type=int, default=2, help="harness/raw rounds; best of each")
    p.add_argument("--profile", type=Path, default=None, help="cProfile of one more harness run")
    p.add_argument(
        "--raw-inflight",
        type=int,
        default=0,
        help="diagnostic: one more httpx2 replay with C connections opened first and only "
        "this many requests in flight (its pool as a CPU-bound harness would leave it)",
    )
    args = p.parse_args(argv)
    results = [measure(cases, args) for cases in args.dialogues]
    for m in results:
        report(m)
    small, large = results[0], results[-1]
    if len(results) > 1:
        growth = min(large.harness_cpu) / min(small.harness_cpu)
        print(
            f"cpu_growth={growth:.3f} (harness CPU per call at {large.dialogues} dialogues / "
            f"at {small.dialogues}; goal <= 1.3)"
        )
    print(f"ratio={max(large.harness) / max(large.raw['httpx2']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
