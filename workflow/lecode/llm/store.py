"""The response store: an append-only, write-ahead log of every successful LLM response.

Layout: ``<root>/<partition>/seg-<time>-<pid>-<random>.jsonl``, one partition per model
identity, one segment file per writing process and partition (so any number of shards write
at once without sharing a file). A line is ``<key>\\t<crc32>\\t<json>\\n`` and is written with
one ``write`` on an ``O_APPEND`` descriptor, then fsynced (group commit: one fsync covers every
line written before it) before the response is handed to the caller. A process killed with
``kill -9`` leaves at most a torn last line, which fails its checksum and is ignored on load.

Only non-empty responses are stored; errors never reach the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEGMENT_GLOB = "seg-*.jsonl"


@dataclass(frozen=True)
class StoredResponse:
    """What a request returned, as stored."""

    text: str
    model: str = ""
    system_fingerprint: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "model": self.model,
            "system_fingerprint": self.system_fingerprint,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StoredResponse:
        return cls(
            text=str(d["text"]),
            model=str(d.get("model") or ""),
            system_fingerprint=str(d.get("system_fingerprint") or ""),
            finish_reason=str(d.get("finish_reason") or ""),
            prompt_tokens=int(d.get("prompt_tokens") or 0),
            completion_tokens=int(d.get("completion_tokens") or 0),
        )


def encode_line(key: str, record: dict[str, Any]) -> bytes:
    body = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    return b"%s\t%08x\t%s\n" % (key.encode(), zlib.crc32(body), body)


def decode_line(line: bytes) -> tuple[str, bytes] | None:
    """``(key, json body)`` of an intact line, ``None`` for a torn or corrupt one."""
    parts = line.split(b"\t", 2)
    if len(parts) != 3 or len(parts[0]) != 64 or len(parts[1]) != 8:
        return None
    try:
        crc = int(parts[1], 16)
    except ValueError:
        return None
    if zlib.crc32(parts[2]) != crc:
        return None
    return parts[0].decode(), parts[2]


class _Segment:
    """This process's append-only file in one partition, with group-commit fsync."""

    def __init__(self, path: Path, durable: bool) -> None:
        self.path = path
        self.durable = durable
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        if durable:
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.written = 0
        self.synced = 0
        self._task: asyncio.Task[None] | None = None
        self._lock = threading.Lock()

    def append(self, data: bytes) -> int:
        with self._lock:
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
            self.written += 1
            return self.written

    def sync_now(self) -> None:
        target = self.written
        if self.durable:
            os.fsync(self.fd)
        self.synced = max(self.synced, target)

    async def _sync(self) -> None:
        target = self.written
        if self.durable:
            await asyncio.to_thread(os.fsync, self.fd)
        self.synced = max(self.synced, target)

    async def sync_through(self, seq: int) -> None:
        loop = asyncio.get_running_loop()
        while self.synced < seq:
            task = self._task
            if task is None or task.done() or task.get_loop() is not loop:
                task = self._task = loop.create_task(self._sync())
            await asyncio.shield(task)

    def close(self) -> None:
        try:
            self.sync_now()
        finally:
            os.close(self.fd)


class _Partition:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: dict[str, bytes] = {}
        self.offsets: dict[str, int] = {}  # segment file name -> bytes consumed
        self.own: str | None = None  # our own segment's file name (already indexed on write)
        self.lock = threading.Lock()

    def refresh(self) -> int:
        """Index complete lines appended since the last refresh (any process). Returns count."""
        if not self.path.is_dir():
            return 0
        added = 0
        with self.lock:
            for seg in sorted(self.path.glob(SEGMENT_GLOB)):
                if seg.name == self.own:
                    continue
                start = self.offsets.get(seg.name, 0)
                try:
                    size = seg.stat().st_size
                except FileNotFoundError:
                    continue
                if size <= start:
                    continue
                with open(seg, "rb") as fh:
                    fh.seek(start)
                    data = fh.read(size - start)
                end = data.rfind(b"\n")
                if end < 0:
                    continue
                for line in data[: end + 1].split(b"\n")[:-1]:
                    decoded = decode_line(line)
                    if decoded is not None and decoded[0] not in self.index:
                        self.index[decoded[0]] = decoded[1]
                        added += 1
                self.offsets[seg.name] = start + end + 1
        return added


class ResponseStore:
    """Exact-match response cache shared by all jobs through the file system."""

    def __init__(self, root: str | Path, *, durable: bool = True, readonly: bool = False) -> None:
        self.root = Path(root)
        self.durable = durable
        self.readonly = readonly
        self._partitions: dict[str, _Partition] = {}
        self._segments: dict[str, _Segment] = {}
        self._lock = threading.Lock()

    def _partition(self, name: str) -> _Partition:
        part = self._partitions.get(name)
        if part is None:
            with self._lock:
                part = self._partitions.get(name)
                if part is None:
                    part = _Partition(self.root / name)
                    part.refresh()
                    self._partitions[name] = part
        return part

    def get(self, partition: str, key: str, *, refresh: bool = False) -> StoredResponse | None:
        """The stored response for ``key``; with ``refresh``, also look at lines other
        processes appended since this partition was loaded."""
        part = self._partition(partition)
        body = part.index.get(key)
        if body is None and refresh and part.refresh():
            body = part.index.get(key)
        if body is None:
            return None
        return StoredResponse.from_dict(json.loads(body)["response"])

    def get_record(self, partition: str, key: str) -> dict[str, Any] | None:
        body = self._partition(partition).index.get(key)
        return None if body is None else json.loads(body)

    def _prepare(self, partition: str, key: str, record: dict[str, Any]) -> tuple[_Segment, int]:
        if self.readonly:
            raise PermissionError("the response store is read-only (replay mode)")
        response = record.get("response") or {}
        if not str(response.get("text") or "").strip():
            raise ValueError("refusing to store an empty response")
        part = self._partition(partition)
        seg = self._segments.get(partition)
        if seg is None:
            with self._lock:
                seg = self._segments.get(partition)
                if seg is None:
                    part.path.mkdir(parents=True, exist_ok=True)
                    name = (
                        f"seg-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-"
                        f"{secrets.token_hex(4)}.jsonl"
                    )
                    seg = _Segment(part.path / name, self.durable)
                    part.own = name
                    self._segments[partition] = seg
        line = encode_line(key, record)
        body = line.split(b"\t", 2)[2][:-1]
        seq = seg.append(line)
        with part.lock:
            part.index.setdefault(key, body)
        return seg, seq

    async def put(self, partition: str, key: str, record: dict[str, Any]) -> None:
        """Append ``record`` (which must hold a non-empty ``response.text``) and wait until it
        is durable."""
        seg, seq = self._prepare(partition, key, record)
        await seg.sync_through(seq)

    def put_sync(self, partition: str, key: str, record: dict[str, Any]) -> None:
        seg, _ = self._prepare(partition, key, record)
        seg.sync_now()

    def __len__(self) -> int:
        return sum(len(p.index) for p in self._partitions.values())

    def load_all(self) -> int:
        """Load every partition on disk (for statistics and tests). Returns the entry count."""
        if self.root.is_dir():
            for d in sorted(self.root.iterdir()):
                if d.is_dir():
                    self._partition(d.name)
        return len(self)

    def close(self) -> None:
        with self._lock:
            segments, self._segments = self._segments, {}
        for seg in segments.values():
            seg.close()
