"""Snakemake script: the judge's scores of one shard (see lecode.evaluation.steps.judge_advice)."""

from lecode.evaluation.steps.judge_advice import run
from lecode.joblog import setup_logging
from lecode.specs import JudgeSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(
    JudgeSpec.from_json(sm.params.spec),
    shard=sm.input.shard,
    transcripts=sm.input.transcripts,
    out=sm.output[0],
)
