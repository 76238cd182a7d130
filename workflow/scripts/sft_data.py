"""Snakemake script: one SFT variant's training data (see lecode.sft.steps.sft_data)."""

from pathlib import Path

from lecode.joblog import setup_logging
from lecode.sft.steps.sft_data import run
from lecode.specs import SFTDataSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SFTDataSpec.from_json(sm.params.spec), out_dir=str(Path(sm.output.data).parent))
