"""The dataset build at corpus size: synthetic transcripts (lecode.corpus.synthetic) through
role identification, stage 1 and stage 2 (offline rules, by shard), the review export
(sheets and Label Studio tasks), the import of two reviewers' sheets covering every dialogue
(one edits a fifth of the intents), the assembly with adjudication rules and the agreement
table, as the `dataset` target's steps run them. Each size runs in a process of its own, so
its peak memory (ru_maxrss) is its own. Ends with ratio=<seconds per transcript at the large
size / at the small size> (1.0: linear).

    .venv/bin/python benchmarks/corpus_scale.py            # 100 and 3000 transcripts
    .venv/bin/python benchmarks/corpus_scale.py --sizes 50 500
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARDS = 4


def one(n: int, work: Path) -> dict[str, float]:
    from lecode.config.corpus import CorpusSplit
    from lecode.config.sections import RougeSettings
    from lecode.corpus.annotate import run as annotate
    from lecode.corpus.inputs import load_pre
    from lecode.corpus.plan import STEPS
    from lecode.corpus.review import import_review
    from lecode.corpus.specs import AgreementSpec, AssembleSpec, ReviewExportSpec
    from lecode.corpus.steps import corpus_agreement, corpus_assemble, corpus_review_export
    from lecode.corpus.synthetic import write_synthetic
    from lecode.shards import shard_name
    from lecode.specs import FileRef

    times: dict[str, float] = {}

    def timed(name: str, start: float) -> None:
        times[name] = round(time.perf_counter() - start, 2)

    t = time.perf_counter()
    files = write_synthetic(work / "transcripts", n, seed=0)
    timed("generate", t)
    t = time.perf_counter()
    shards = [[f for k, f in enumerate(files) if k % SHARDS == s] for s in range(SHARDS)]
    out: dict[str, list[str]] = {"roles": [], "stage1": [], "stage2": []}
    for s, mine in enumerate(shards):
        previous = None
        for step, cls in STEPS.items():
            spec = cls(
                shard=shard_name(s),
                transcripts=tuple(FileRef.of(f) for f in mine),
                annotator=None,
                code="bench",
            )
            path = str(work / f"{step}-{s}.jsonl")
            annotate(step, spec, previous=previous, out=path)
            out[step].append(path)
            previous = path
    timed("pre-annotation (roles, stage 1, stage 2)", t)
    t = time.perf_counter()
    export = work / "export"
    corpus_review_export.run(
        ReviewExportSpec(pre="bench", code="bench"),
        stage1=out["stage1"],
        stage2=out["stage2"],
        out_dir=str(export),
        roles=out["roles"],
    )
    timed("review export", t)
    reviews = work / "review"
    for who in ("ann_a", "ann_b"):
        (reviews / who).mkdir(parents=True)
        for k, sheet in enumerate(sorted(export.glob("*.stage[12].csv"))):
            text = sheet.read_text(encoding="utf-8-sig")
            if who == "ann_b" and k % 10 == 0 and sheet.name.endswith("stage1.csv"):
                text = text.replace(",2 Client Response,", ",3 Client Information Addition,", 1)
            (reviews / who / sheet.name).write_text("\ufeff" + text, encoding="utf-8")
    pre1, pre2 = load_pre(out["stage1"], out["stage2"])
    t = time.perf_counter()
    for who in ("ann_a", "ann_b"):
        import_review(sorted((reviews / who).iterdir()), who, pre1, pre2)
    timed("review import (2 reviewers, every dialogue)", t)
    refs = tuple(FileRef.of(p) for p in sorted(reviews.glob("*/*.csv")))
    t = time.perf_counter()
    corpus_assemble.run(
        AssembleSpec(
            pre="bench",
            final="ann_a",
            reviews=refs,
            split=CorpusSplit(),
            reviewers=("ann_a", "ann_b"),
            code="bench",
        ),
        stage1=out["stage1"],
        stage2=out["stage2"],
        out_dir=str(work / "built"),
    )
    timed("assembly (adjudication rules, split, validation)", t)
    t = time.perf_counter()
    corpus_agreement.run(
        AgreementSpec(
            pre="bench",
            reviewers=("ann_a", "ann_b"),
            reviews=refs,
            rouge=RougeSettings(),
            fact_threshold=0.5,
            code="bench",
        ),
        stage1=out["stage1"],
        stage2=out["stage2"],
        out_dir=str(work / "agreement"),
    )
    timed("agreement (kappa, alpha, alignment)", t)
    times["total"] = round(sum(v for k, v in times.items() if k != "generate"), 2)
    times["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 3000])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(one(args.one, Path(tmp))))
        return
    results = {}
    for n in args.sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True
        )
        results[n] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{n} transcripts: " + ", ".join(f"{k} {v}" for k, v in results[n].items()))
    small, large = min(results), max(results)
    per = {n: results[n]["total"] / n for n in (small, large)}
    print(f"ratio={per[large] / per[small]:.2f}")


if __name__ == "__main__":
    main()
