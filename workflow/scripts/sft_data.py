"""Snakemake script: one SFT variant's training data (see lecode.steps.sft_data)."""

from pathlib import Path

from lecode.specs import SFTDataSpec
from lecode.steps.logs import setup_logging
from lecode.steps.sft_data import run

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(SFTDataSpec.from_json(sm.params.spec), out_dir=str(Path(sm.output.data).parent))
