"""Snakemake script: per-dialogue scores of one system (see lecode.steps.score_system)."""

from lecode.specs import ScoreSpec
from lecode.steps.logs import setup_logging
from lecode.steps.score_system import run

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
