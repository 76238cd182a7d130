"""Test dialogues -> shards by a stable hash of the case id, with manifests and an index."""

from __future__ import annotations

import logging
from pathlib import Path

from lecode import paths
from lecode.dataset import load_cases
from lecode.evaluation.specs import ShardSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.shards import select, write_shards

log = logging.getLogger("lecode")


def run(spec: ShardSpec, *, out_dir: str) -> None:
    cases = select(load_cases(spec.test.path), spec.limit)
    if not cases:
        raise ValueError(f"dataset.test: {spec.test.path} holds no consultations")
    index = write_shards(
        cases,
        spec.n_shards,
        out_dir,
        source={"path": spec.test.path, "sha256": spec.test.sha256, "limit": spec.limit},
    )
    log.info("%d test cases in %d shards: %s", len(cases), spec.n_shards, index["shards"])


def _run_job(spec: ShardSpec, job: JobFiles) -> None:
    run(spec, out_dir=str(Path(job.output.index).parent))


STEP = Step(spec=ShardSpec, run=_run_job, output=paths.INDEX)
