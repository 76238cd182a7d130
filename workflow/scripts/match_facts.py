"""Snakemake script: facts elicited per question of one shard
(see lecode.evaluation.steps.match_facts)."""

from lecode.evaluation.steps.match_facts import run
from lecode.joblog import setup_logging
from lecode.specs import MatchSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(
    MatchSpec.from_json(sm.params.spec),
    shard=sm.input.shard,
    transcripts=sm.input.transcripts,
    out=sm.output[0],
)
