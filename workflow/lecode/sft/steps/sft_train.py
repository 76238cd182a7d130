"""LoRA training of one SFT variant (see :mod:`lecode.sft.train`; GPU, opt-in)."""

from __future__ import annotations

from lecode.sft.train import launch
from lecode.specs import SFTTrainSpec


def run(spec: SFTTrainSpec, *, data: str, out_dir: str) -> None:
    launch(spec, data=data, out_dir=out_dir)
