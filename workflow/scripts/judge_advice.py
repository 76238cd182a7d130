"""Snakemake script: the LLM judge's scores for one shard of transcripts."""

from lecode.jobs import run_judging, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run_judging(sm.config, shard=sm.input.shard, transcripts=sm.input.transcripts, out=sm.output[0])
