"""Snakemake script: the judge-drift sentinel (see lecode.steps.judge_sentinel)."""

from lecode.specs import SentinelSpec
from lecode.steps.judge_sentinel import run
from lecode.steps.logs import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SentinelSpec.from_json(sm.params.spec), out_dir=sm.output[0])
