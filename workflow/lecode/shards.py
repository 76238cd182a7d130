"""Spread test cases over shards by a stable hash of their id, with a manifest per shard.

A case's shard depends on its id alone (never on its position in the file), so adding cases
to the dataset leaves every other case in its shard.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lecode.dataset import id_hash
from lecode.recordio import atomic_write_text, write_cases
from lecode.records import Case


class ShardError(ValueError):
    """Shards and their manifests do not add up to the expected set of cases."""


def shard_of(case_id: str, n_shards: int) -> int:
    return id_hash(case_id) % n_shards


def select(cases: Sequence[Case], limit: int | None) -> list[Case]:
    """The first ``limit`` cases in id-hash order (all when ``limit`` is None), input order kept."""
    if limit is None or limit >= len(cases):
        return list(cases)
    keep = {c.id for c in sorted(cases, key=lambda c: (id_hash(c.id), c.id))[:limit]}
    return [c for c in cases if c.id in keep]


def shard_name(k: int) -> str:
    return f"{k:03d}"


def write_shards(
    cases: Sequence[Case], n_shards: int, out_dir: str | Path, *, source: dict[str, Any]
) -> dict[str, Any]:
    """Write ``NNN.jsonl`` and ``NNN.manifest.json`` per shard plus ``index.json``."""
    out = Path(out_dir)
    buckets: list[list[Case]] = [[] for _ in range(n_shards)]
    for c in cases:
        buckets[shard_of(c.id, n_shards)].append(c)
    index: dict[str, Any] = {"source": source, "n_shards": n_shards, "n_cases": len(cases)}
    shards = {}
    for k, bucket in enumerate(buckets):
        bucket.sort(key=lambda c: c.id)
        name = shard_name(k)
        path = out / f"{name}.jsonl"
        write_cases(path, bucket)
        manifest = {
            "shard": name,
            "n_cases": len(bucket),
            "case_ids": [c.id for c in bucket],
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }
        atomic_write_text(out / f"{name}.manifest.json", json.dumps(manifest, indent=1) + "\n")
        shards[name] = len(bucket)
    index["shards"] = shards
    index["case_ids"] = sorted(c.id for c in cases)
    atomic_write_text(out / "index.json", json.dumps(index, ensure_ascii=False, indent=1) + "\n")
    return index


def check_union(index_path: str | Path, seen_ids: Iterable[str], what: str) -> None:
    """Raise unless ``seen_ids`` is exactly the set of cases in the shard index, once each."""
    expected = json.loads(Path(index_path).read_text(encoding="utf-8"))["case_ids"]
    seen = list(seen_ids)
    dupes = sorted({i for i in seen if seen.count(i) > 1}) if len(set(seen)) != len(seen) else []
    missing = sorted(set(expected) - set(seen))
    extra = sorted(set(seen) - set(expected))
    if dupes or missing or extra:
        raise ShardError(
            f"{what}: shards do not add up to the dataset: missing {missing[:10]}"
            f"{'...' if len(missing) > 10 else ''}, unexpected {extra[:10]}, "
            f"duplicated {dupes[:10]}"
        )
