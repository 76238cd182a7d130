"""Snakemake script: facts elicited per question, for one shard of transcripts."""

from lecode.jobs import run_matching, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run_matching(sm.config, shard=sm.input.shard, transcripts=sm.input.transcripts, out=sm.output[0])
