"""Test dialogues -> shards by a stable hash of the case id, with manifests and an index."""

from __future__ import annotations

import logging

from lecode.dataset import load_cases
from lecode.shards import select, write_shards
from lecode.specs import ShardSpec

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
