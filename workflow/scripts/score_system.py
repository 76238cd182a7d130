"""Snakemake script: per-dialogue scores of one system over all shards."""

from lecode.jobs import run_scoring, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run_scoring(
    sm.config,
    shards=list(sm.input.shards),
    transcripts=list(sm.input.transcripts),
    matches=list(sm.input.matches),
    judgements=list(sm.input.judgements),
    out=sm.output[0],
    threads=sm.threads,
)
