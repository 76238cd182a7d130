"""Per-dialogue scores of one system over all its shards (one BERTScore model load)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lecode import paths
from lecode.evaluation.specs import ScoreSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import read_cases, read_judgements, read_matches, read_transcripts
from lecode.score_io import write_scores

log = logging.getLogger("lecode")


def run(
    spec: ScoreSpec,
    *,
    shards: Sequence[str],
    transcripts: Sequence[str],
    matches: Sequence[str],
    judgements: Sequence[str],
    out: str,
    threads: int = 1,
) -> None:
    from lecode.evaluation.scoring import score_dialogues
    from lecode.metrics.advice import BertScorer, RougeL

    cases = {c.id: c for s in shards for c in read_cases(s)}
    ts = [t for p in transcripts for t in read_transcripts(p)]
    ms = {m.case_id: m for p in matches for m in read_matches(p)}
    js = {j.case_id: j for p in judgements for j in read_judgements(p)}
    rouge = RougeL(punctuation=spec.rouge.punctuation == "keep")
    b = spec.bertscore
    bert = None
    if b.enabled:
        bert = BertScorer(
            model=b.model, num_layers=b.num_layers, batch_size=b.batch_size, threads=threads
        )
    rows = score_dialogues(cases, ts, ms, js, rouge, bert)
    write_scores(out, rows)
    log.info("scored %d dialogues", len(rows))


def _run_job(spec: ScoreSpec, job: JobFiles) -> None:
    run(
        spec,
        shards=list(job.input.shards),
        transcripts=list(job.input.transcripts),
        matches=list(job.input.matches),
        judgements=list(job.input.judgements),
        out=job.output[0],
        threads=job.threads,
    )


STEP = Step(spec=ScoreSpec, run=_run_job, output=paths.SCORE)
