"""LoRA training of one SFT variant (see :mod:`lecode.sft.train`; GPU, opt-in)."""

from __future__ import annotations

from pathlib import Path

from lecode import paths
from lecode.plan.jobs import JobFiles, Step
from lecode.sft.specs import SFTTrainSpec
from lecode.sft.train import launch


def run(spec: SFTTrainSpec, *, data: str, out_dir: str) -> None:
    launch(spec, data=data, out_dir=out_dir)


def _run_job(spec: SFTTrainSpec, job: JobFiles) -> None:
    run(spec, data=job.input.data, out_dir=str(Path(job.output.adapter).parent))


STEP = Step(spec=SFTTrainSpec, run=_run_job, output=paths.SFT_ADAPTER)
