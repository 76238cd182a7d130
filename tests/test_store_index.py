"""The response store's index holds locations, not responses: lookups read the line back, the
first copy of a key wins, equal tags are told apart by the key on disk, and an entry whose line
changed after loading is dropped as corrupt."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

import lecode.llm.store as store_mod
from lecode.llm.store import ResponseStore, encode_line

PART = "m-0123456789ab"


def key(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()


def record(i: int, text: str) -> dict[str, object]:
    return {"key": key(i), "response": {"text": text}}


def write_segment(root: Path, name: str, items: list[tuple[int, str]]) -> Path:
    part = root / PART
    part.mkdir(parents=True, exist_ok=True)
    path = part / name
    path.write_bytes(b"".join(encode_line(key(i), record(i, t)) for i, t in items))
    return path


@pytest.mark.parametrize("collide", [False, True])
def test_lookups_read_back_the_first_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collide: bool
) -> None:
    if collide:  # every key gets the same tag: probing and the key check on disk decide
        monkeypatch.setattr(store_mod, "_slot", lambda k: 7)
    n = 300 if collide else 3000
    write_segment(tmp_path, "seg-a-1-x.jsonl", [(i, f"a{i}") for i in range(n)])
    write_segment(tmp_path, "seg-b-2-x.jsonl", [(i, f"b{i}") for i in range(n // 2, n + 10)])
    store = ResponseStore(tmp_path)
    assert store.load_all() == n + 10
    for i in (0, n // 2, n - 1):
        hit = store.get(PART, key(i))
        assert hit is not None and hit.text == f"a{i}"  # first copy in segment order
    hit = store.get(PART, key(n + 3))
    assert hit is not None and hit.text == f"b{n + 3}"
    assert store.get(PART, key(10**6)) is None
    # own writes are indexed by location too, and a second put of a key keeps the first
    asyncio.run(store.put(PART, key(10**6), record(10**6, "new")))
    asyncio.run(store.put(PART, key(10**6), record(10**6, "again")))
    assert store.get(PART, key(10**6)).text == "new"  # type: ignore[union-attr]
    assert len(store) == n + 11
    store.close()
    again = ResponseStore(tmp_path)
    assert again.load_all() == n + 11
    assert again.get(PART, key(10**6)).text == "new"  # type: ignore[union-attr]


def test_a_line_changed_after_loading_is_dropped_as_corrupt(tmp_path: Path) -> None:
    seg = write_segment(tmp_path, "seg-a-1-x.jsonl", [(1, "one"), (2, "two"), (3, "three")])
    store = ResponseStore(tmp_path)
    assert store.load_all() == 3
    data = bytearray(seg.read_bytes())
    at = data.index(b'"two"')
    data[at + 1 : at + 4] = b"TWO"  # same length: the checksum no longer matches
    seg.write_bytes(bytes(data))
    assert store.get(PART, key(2)) is None
    note = store.describe_corrupt(PART, key(2)) or ""
    assert f"{seg}@" in note and "checksum mismatch" in note
    assert len(store) == 2
    assert store.get(PART, key(1)).text == "one"  # type: ignore[union-attr]
    assert store.get(PART, key(3)).text == "three"  # type: ignore[union-attr]


def test_index_memory_does_not_hold_responses(tmp_path: Path) -> None:
    big = "律" * 20000
    write_segment(tmp_path, "seg-a-1-x.jsonl", [(i, big + str(i)) for i in range(50)])
    store = ResponseStore(tmp_path)
    assert store.load_all() == 50
    index = store._partitions[PART].index
    held = sum(len(a) * a.itemsize for a in (index._tags, index._locs, index._lengths))
    assert held < 64 * 1024 < os.path.getsize(tmp_path / PART / "seg-a-1-x.jsonl")
    assert store.get(PART, key(7)).text == big + "7"  # type: ignore[union-attr]
