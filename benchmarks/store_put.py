"""What storing a response costs as the store grows: the response store's ``put`` (the claim
under ``claims.log``'s lock, the catch-up on what other jobs stored, the append) with the
segments of many finished jobs in the partition against the same with a few.

A put reads only what was added since the writer last looked, never the whole store, so the
two should cost about the same: ``ratio`` is the time per put with ``--many`` finished segments
over the time with ``--few`` (goal: at most 2). Each round also has a second writer storing a
response between two of ours, so that every put has something new to catch up on.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from lecode.llm.store import ResponseStore, encode_line

PART = "model-bench"


def fill(root: Path, segments: int, lines: int) -> None:
    """``segments`` finished jobs' segment files of ``lines`` responses each."""
    part = root / PART
    part.mkdir(parents=True)
    for s in range(segments):
        with open(part / f"seg-20260101T000000-{s}-00000000.jsonl", "wb") as fh:
            for i in range(lines):
                key = f"{s:032x}{i:032x}"
                fh.write(encode_line(key, {"response": {"text": "答" * 200}}))


def per_put(segments: int, puts: int, lines: int) -> float:
    """Seconds per put of one writer while a second writer stores between its puts."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fill(root, segments, lines)
        mine, other = ResponseStore(root, durable=False), ResponseStore(root, durable=False)
        assert mine.get(PART, "f" * 64) is None and other.get(PART, "f" * 64) is None
        spent = 0.0
        for i in range(puts):
            other.put_sync(PART, f"{'e' * 32}{i:032x}", {"response": {"text": "问" * 200}})
            start = time.perf_counter()
            mine.put_sync(PART, f"{'f' * 32}{i:032x}", {"response": {"text": "答" * 200}})
            spent += time.perf_counter() - start
        mine.close()
        other.close()
        return spent / puts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--few", type=int, default=10, help="finished segments, small store")
    ap.add_argument("--many", type=int, default=2000, help="finished segments, large store")
    ap.add_argument("--lines", type=int, default=20, help="responses per finished segment")
    ap.add_argument("--puts", type=int, default=500, help="puts measured per store")
    args = ap.parse_args()
    small = per_put(args.few, args.puts, args.lines)
    large = per_put(args.many, args.puts, args.lines)
    print(f"put with {args.few} finished segments: {small * 1e3:.3f} ms")
    print(f"put with {args.many} finished segments: {large * 1e3:.3f} ms")
    print(f"ratio={large / small:.2f}")


if __name__ == "__main__":
    main()
