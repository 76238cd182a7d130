from __future__ import annotations

import json
from pathlib import Path

import pytest

from lecode.dataset import load_cases
from lecode.recordio import read_cases
from lecode.shards import ShardError, check_union, select, shard_of, write_shards
from tests.conftest import raw_case, write_jsonl


def _cases(tmp_path: Path, n: int, name: str = "d.jsonl"):
    return load_cases(write_jsonl(tmp_path / name, [raw_case(f"id-{i}") for i in range(n)]))


def test_shard_of_is_stable_known_values() -> None:
    # First 8 bytes of sha256(id) as a big-endian integer, modulo 4; frozen so that a change
    # of the hash (which would move every case to another shard) fails loudly.
    assert [shard_of(f"id-{i}", 4) for i in range(6)] == [3, 2, 3, 0, 1, 3]
    assert shard_of("id-0", 1) == 0


def test_adding_cases_keeps_existing_assignments(tmp_path: Path) -> None:
    small, big = _cases(tmp_path, 20, "a.jsonl"), _cases(tmp_path, 40, "b.jsonl")
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    write_shards(small, 4, out_a, source={})
    write_shards(list(reversed(big)), 4, out_b, source={})
    for k in range(4):
        ids_a = {c.id for c in read_cases(out_a / f"{k:03d}.jsonl")}
        ids_b = {c.id for c in read_cases(out_b / f"{k:03d}.jsonl")}
        assert ids_a <= ids_b  # old cases never move shard
        manifest = json.loads((out_b / f"{k:03d}.manifest.json").read_text())
        assert manifest["case_ids"] == sorted(ids_b)


def test_union_check(tmp_path: Path) -> None:
    write_shards(_cases(tmp_path, 5), 2, tmp_path / "s", source={})
    index = tmp_path / "s" / "index.json"
    check_union(index, [f"id-{i}" for i in range(5)], "x")
    with pytest.raises(ShardError, match="missing \\['id-4'\\]"):
        check_union(index, [f"id-{i}" for i in range(4)], "x")
    with pytest.raises(ShardError, match="duplicated \\['id-0'\\]"):
        check_union(index, ["id-0", *[f"id-{i}" for i in range(5)]], "x")


def test_select_limit_is_order_independent(tmp_path: Path) -> None:
    cases = _cases(tmp_path, 30)
    assert {c.id for c in select(cases, 7)} == {c.id for c in select(cases[::-1], 7)}
    assert len(select(cases, 7)) == 7 and select(cases, None) == cases
