"""Snakemake script: per-dialogue scores of one system
(see lecode.evaluation.steps.score_system)."""

from lecode.evaluation.steps.score_system import run
from lecode.joblog import setup_logging
from lecode.specs import ScoreSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(
    ScoreSpec.from_json(sm.params.spec),
    shards=list(sm.input.shards),
    transcripts=list(sm.input.transcripts),
    matches=list(sm.input.matches),
    judgements=list(sm.input.judgements),
    out=sm.output[0],
    threads=sm.threads,
)
