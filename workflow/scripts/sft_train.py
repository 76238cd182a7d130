"""Snakemake script: LoRA training of one SFT variant (see lecode.sft.steps.sft_train)."""

from pathlib import Path

from lecode.joblog import setup_logging
from lecode.sft.steps.sft_train import run
from lecode.specs import SFTTrainSpec

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
run(
    SFTTrainSpec.from_json(sm.params.spec),
    data=sm.input.data,
    out_dir=str(Path(sm.output.adapter).parent),
)
