"""The noise study's result: variance components per Table 3 column (pooled over the
replicated systems) and minimum detectable differences, as noise.json and a table document
(the tables job copies both in and marks Table 3's neighbouring rows)."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl

from lecode import paths
from lecode.noise import (
    FACTORS,
    decompose,
    min_detectable_difference,
    pool,
    z_sum,
)
from lecode.noise.specs import NoiseSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import atomic_write_text, read_transcripts
from lecode.score_io import read_scores

log = logging.getLogger("lecode")


def with_bertscore(spec: NoiseSpec, threads: int) -> dict[str, pl.DataFrame]:
    """Each run's scores (by run directory), with BERTScore F1 of its advice added when
    BERTScore is on (one model load for all runs)."""
    scores = {r.dir: read_scores(Path(r.dir) / "scores.csv") for r in spec.runs}
    b = spec.bertscore
    if b is None:
        return scores
    from lecode.dataset import load_cases
    from lecode.metrics.advice import BertScorer

    refs = {c.id: c.suggestion for c in load_cases(spec.test.path)}
    pending: list[tuple[str, str, str, str]] = []  # (run dir, case id, advice, reference)
    for r in spec.runs:
        for t in read_transcripts(Path(r.dir) / "transcripts.jsonl"):
            ref = refs.get(t.case_id, "")
            if t.stop_reason != "error" and t.advice is not None and ref.strip():
                pending.append((r.dir, t.case_id, t.advice, ref))
    f1: dict[tuple[str, str], float] = {}
    if pending:
        scorer = BertScorer(
            model=b.model, num_layers=b.num_layers, batch_size=b.batch_size, threads=threads
        )
        result = scorer.score_detailed([p[2] for p in pending], [p[3] for p in pending])
        f1 = {(p[0], p[1]): float(v) for p, v in zip(pending, result.f1, strict=True)}
    return {
        d: frame.with_columns(
            pl.Series(
                "bertscore_f1",
                [f1.get((d, c)) for c in frame["case_id"].to_list()],
                dtype=pl.Float64,
            )
        )
        for d, frame in scores.items()
    }


def run(spec: NoiseSpec, *, out_dir: str, threads: int = 1) -> dict:
    from lecode.metrics.registry import with_tag
    from lecode.report.document import write_document
    from lecode.report.noise import NOISE_JSON, noise_document

    n_test = int(json.loads(Path(spec.index).read_text(encoding="utf-8"))["n_cases"])
    scored = with_bertscore(spec, threads)
    frames: dict[tuple[str, str], dict[tuple[str, int], pl.DataFrame]] = defaultdict(dict)
    for r in spec.runs:
        frames[(r.expert, r.strategy)][(r.factor, r.index)] = scored[r.dir]
    metrics = [m for m in with_tag("table3") if m.key not in spec.not_applicable]
    per_system: dict[str, dict[str, dict]] = {}
    pooled_parts: dict[str, list] = defaultdict(list)
    subset = 0
    n_runs = 1
    for (expert, strategy), runs in frames.items():
        base = runs[("base", 0)]
        ids = sorted(base["case_id"].to_list())
        subset = max(subset, len(ids))

        def column(frame: pl.DataFrame, key: str, ids: list[str] = ids) -> np.ndarray:
            rows = dict(zip(frame["case_id"].to_list(), frame[key].to_list(), strict=True))
            return np.array(
                [np.nan if rows.get(c) is None else float(rows[c]) for c in ids], dtype=np.float64
            )

        system = {}
        for m in metrics:
            if m.key not in base.columns:
                continue
            by_factor = {}
            for f in FACTORS:
                cols = [column(runs[(f2, k)], m.key) for (f2, k) in sorted(runs) if f2 == f]
                if cols:
                    by_factor[f] = np.column_stack([column(base, m.key), *cols])
                    n_runs = max(n_runs, len(cols) + 1)
            comp = decompose(column(base, m.key), by_factor, judge_metric=m.need == "judgement")
            system[m.key] = comp.as_dict()
            pooled_parts[m.key].append(comp)
        per_system[f"{expert}/{strategy}"] = system
    out_metrics = {}
    for m in metrics:
        if m.key not in pooled_parts:
            continue
        p = pool(pooled_parts[m.key])
        total = p.total
        mdd = (
            None
            if total is None
            else min_detectable_difference(total, n_test, alpha=spec.alpha, power=spec.power)
            * m.scale
        )
        out_metrics[m.key] = {**p.as_dict(), "scale": m.scale, "mdd": mdd}
    noise = {
        "n_test": n_test,
        "subset": subset,
        "n": n_runs,
        "n_systems": len(frames),
        "vary": list(spec.vary),
        "alpha": spec.alpha,
        "power": spec.power,
        "z": z_sum(spec.alpha, spec.power),
        "metrics": out_metrics,
        "systems": per_system,
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / NOISE_JSON, json.dumps(noise, ensure_ascii=False, indent=1) + "\n")
    write_document(noise_document(noise, spec.digest()), out)
    log.info("noise: %d systems, %d metrics", len(frames), len(out_metrics))
    return noise


def _run_job(spec: NoiseSpec, job: JobFiles) -> None:
    run(spec, out_dir=job.output[0], threads=job.threads)


STEP = Step(spec=NoiseSpec, run=_run_job, output=paths.NOISE)
