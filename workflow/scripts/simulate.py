"""Snakemake script: one shard of consultations for one expert x strategy."""

from lecode.jobs import run_simulation, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run_simulation(
    sm.config,
    expert=sm.wildcards.expert,
    strategy=sm.wildcards.strategy,
    shard=sm.input.shard,
    out=sm.output[0],
    journal=sm.params.journal,
)
