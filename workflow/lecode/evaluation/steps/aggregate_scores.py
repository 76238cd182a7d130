"""All systems' per-dialogue scores in one CSV; each system must cover every case once."""

from __future__ import annotations

import polars as pl

from lecode import paths
from lecode.evaluation.specs import AggregateSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import atomic_write_text
from lecode.score_io import read_scores, scores_frame
from lecode.shards import check_union


def run(spec: AggregateSpec, *, out: str) -> pl.DataFrame:
    frames = []
    for x in spec.rows:
        frame = read_scores(x.score_file)
        check_union(spec.index, frame["case_id"].to_list(), f"{x.expert}/{x.strategy}")
        frames.append(frame)
    allf = pl.concat(frames) if frames else scores_frame([])
    atomic_write_text(out, allf.write_csv(float_precision=6))
    return allf


def _run_job(spec: AggregateSpec, job: JobFiles) -> None:
    run(spec, out=job.output[0])


STEP = Step(spec=AggregateSpec, run=_run_job, output=paths.AGGREGATE)
