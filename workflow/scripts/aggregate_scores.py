"""Snakemake script: gather every system's per-dialogue scores, checking coverage."""

from lecode.jobs import aggregate_scores, setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
aggregate_scores(
    index=sm.input.index,
    score_files=list(sm.input.scores),
    systems=sm.params.systems,
    out=sm.output[0],
)
