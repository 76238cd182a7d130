"""Snakemake script: the judge-drift sentinel (see lecode.sentinel.steps.judge_sentinel)."""

from lecode.joblog import setup_logging
from lecode.sentinel.steps.judge_sentinel import run
from lecode.specs import SentinelSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SentinelSpec.from_json(sm.params.spec), out_dir=sm.output[0])
