"""The response store: an append-only, write-ahead log of every successful LLM response.

Layout: ``<root>/<partition>/seg-<time>-<pid>-<random>.jsonl``, one partition per model
identity, one segment file per writing process and partition (so any number of shards write
at once without sharing a file). A line is ``<key>\\t<crc32>\\t<json>\\n`` and is written with
one ``write`` on an ``O_APPEND`` descriptor, then fsynced (group commit: one fsync covers every
line written before it) before the response is handed to the caller. A process killed with
``kill -9`` leaves at most a torn last line.

Corruption is never silent: a line that is torn, fails its checksum or is not a stored record is
skipped on load with a warning naming ``file:line``, and the store remembers the key it held
(or, where the key itself is unreadable, the line), so a replay miss can say that the entry was
present but corrupt (:meth:`ResponseStore.describe_corrupt`). A line without its newline is torn
only once its writer is gone: each writer holds an exclusive ``flock`` on its segment while it is
open, so a reader that can take a shared lock knows the tail will never be completed. The next
append never lands on a torn fragment: other processes' segments are never appended to (every
writer creates its own with ``O_EXCL``), and a write of our own that fails part way makes the
next line start with a newline.

Only non-empty responses are stored; errors never reach the store.

One response per key, whoever asks: two jobs that send the same request at once (two
strategies whose client hears the same first question, two systems' identical advice before the
judge) may both reach the endpoint, but the second to store it finds the first's line and is
handed that response instead of its own (:meth:`ResponseStore.put`), so every job uses the
response that a replay of the store reads, and a table regenerated from the store equals the one
the run built, even from a provider that samples. The check and the append happen under an
exclusive ``flock`` on the partition's ``claims.log``, where each writer, after appending a line,
names its segment: a writer about to store catches up by reading the segments named there since
it last looked, which costs what was added, not the size of the store (``tests/test_llm_store.py``
counts it). A lookup that misses catches up the same way before a request is sent, so a
response another job stored meanwhile is not asked for again.

A process keeps in memory where each entry lies (segment, offset, length: about 16-32 bytes an
entry, :class:`_Index`), not the entries: a lookup reads the line with one ``pread`` and checks
its key and checksum again, so a job's memory stays flat however large the store grows
(``benchmarks/scale.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import secrets
import threading
import time
import weakref
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEGMENT_GLOB = "seg-*.jsonl"
CLAIMS_FILE = "claims.log"  # one segment name a line, after each line a writer appends
MAX_WARNINGS_PER_SEGMENT = 20  # per load of one segment; the rest are counted in one line

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredResponse:
    """What a request returned, as stored."""

    text: str
    model: str = ""
    system_fingerprint: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: A reasoning model's separate reasoning (``message.reasoning_content``), kept raw.
    reasoning: str = ""
    #: ``usage.completion_tokens_details.reasoning_tokens`` when the API reports it.
    reasoning_tokens: int | None = None
    #: Prompt tokens the provider read from its prompt cache, when it reports them.
    cached_prompt_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "model": self.model,
            "system_fingerprint": self.system_fingerprint,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        # Only when present, so that records of other models stay as they always were.
        if self.reasoning:
            out["reasoning"] = self.reasoning
        if self.reasoning_tokens is not None:
            out["reasoning_tokens"] = self.reasoning_tokens
        if self.cached_prompt_tokens is not None:
            out["cached_prompt_tokens"] = self.cached_prompt_tokens
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StoredResponse:
        return cls(
            text=str(d["text"]),
            model=str(d.get("model") or ""),
            system_fingerprint=str(d.get("system_fingerprint") or ""),
            finish_reason=str(d.get("finish_reason") or ""),
            prompt_tokens=int(d.get("prompt_tokens") or 0),
            completion_tokens=int(d.get("completion_tokens") or 0),
            reasoning=str(d.get("reasoning") or ""),
            reasoning_tokens=(
                int(d["reasoning_tokens"]) if d.get("reasoning_tokens") is not None else None
            ),
            cached_prompt_tokens=(
                int(d["cached_prompt_tokens"])
                if d.get("cached_prompt_tokens") is not None
                else None
            ),
        )


def encode_line(key: str, record: dict[str, Any]) -> bytes:
    body = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    return b"%s\t%08x\t%s\n" % (key.encode(), zlib.crc32(body), body)


def _key_of(field: bytes) -> str | None:
    """The key in a line's first field, if it is one (64 printable ASCII characters)."""
    if len(field) != 64 or not field.isascii() or not field.isalnum():
        return None
    return field.decode("ascii")


def inspect_line(line: bytes) -> tuple[str | None, bytes | None, str | None]:
    """``(key, json body, None)`` for an intact line (without its newline), else
    ``(key or None, None, reason)``; the key is returned whenever it is still readable."""
    parts = line.split(b"\t", 2)
    key = _key_of(parts[0])
    if len(parts) != 3:
        return key, None, "torn or malformed line (missing fields)"
    if key is None:
        return None, None, "unreadable key"
    if len(parts[1]) != 8:
        return key, None, "malformed checksum field"
    try:
        crc = int(parts[1], 16)
    except ValueError:
        return key, None, "malformed checksum field"
    if zlib.crc32(parts[2]) != crc:
        return key, None, "checksum mismatch"
    return key, parts[2], None


def decode_line(line: bytes) -> tuple[str, bytes] | None:
    """``(key, json body)`` of an intact line, ``None`` for a torn or corrupt one."""
    key, body, _ = inspect_line(line)
    return None if key is None or body is None else (key, body)


def partition_records(root: str | Path, partition: str) -> Iterator[dict[str, Any]]:
    """Every intact record of one partition, read straight from its segments in order (for
    statistics over a model's responses; torn or corrupt lines are skipped)."""
    path = Path(root) / partition
    for seg in sorted(path.glob(SEGMENT_GLOB)) if path.is_dir() else []:
        with open(seg, "rb") as fh:
            for line in fh:
                decoded = decode_line(line.rstrip(b"\n"))
                if decoded is not None:
                    yield json.loads(decoded[1])


def _writer_gone(fh: Any, name: str) -> bool:
    """Whether no process is writing the segment open as ``fh`` (its tail is final)."""
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # no locks on this file system: is the writer's pid alive here?
        try:
            os.kill(int(name.split("-")[2]), 0)
        except ProcessLookupError:
            return True
        except (OSError, ValueError, IndexError):
            return False
        return False
    return True


class _Segment:
    """This process's append-only file in one partition, with group-commit fsync."""

    def __init__(self, path: Path, durable: bool) -> None:
        self.path = path
        self.durable = durable
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        # Held while we may write: readers take an unlocked segment's tail as final. Readers
        # never lock an empty segment, so this does not wait. Without locks on this file system
        # readers fall back to asking whether our pid is alive.
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        if durable:
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.written = 0
        self.synced = 0
        self.size = 0  # bytes in the file: we are its only writer
        self._task: asyncio.Task[None] | None = None
        self._lock = threading.Lock()
        self._torn = False  # a failed write left a fragment: the next line starts afresh

    def append(self, data: bytes) -> tuple[int, int]:
        """Write one line; returns (its sequence number for :meth:`sync_through`, the file
        offset where it starts)."""
        with self._lock:
            start = self.size
            if self._torn:
                data = b"\n" + data
                start += 1
            view = memoryview(data)
            try:
                while view:
                    n = os.write(self.fd, view)
                    view = view[n:]
            except BaseException:
                self._torn = self._torn or len(view) < len(data)
                self.size += len(data) - len(view)
                raise
            self._torn = False
            self.size += len(data)
            self.written += 1
            return self.written, start

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
        if self.fd < 0:
            return
        try:
            self.sync_now()
        finally:
            os.close(self.fd)
            self.fd = -1


#: A line's JSON body starts this many bytes after the line: 64-byte key, tab, 8-digit
#: checksum, tab (:func:`inspect_line` accepts no other shape).
_BODY_AT = 64 + 1 + 8 + 1
_SEG_SHIFT = 44  # a location is segment number << 44 | line offset (segments below 16 TiB)
_OPEN_SEGMENTS = 64  # read descriptors kept open per partition


def _slot(key: str) -> int:
    """A key's nonzero 32-bit tag in the index (from Python's string hash: stable within a
    process, which is as long as an index lives; equal tags are told apart by the key itself,
    read back from the segment)."""
    return (hash(key) & 0xFFFF_FFFF) or 1


class _Index:
    """Where each stored response lies, not the response itself: a job's memory must not grow
    with the store (``benchmarks/scale.py``: with the responses in memory, every job of a
    10,000-dialogue run held hundreds of MB of responses it never asks for). An open-addressing
    hash table in three arrays (32-bit key tag, segment number and line offset, body length:
    16 bytes a table slot, at most two thirds full). A lookup probes the tag and reads the line
    with one ``pread``, checking its key and checksum; the first copy of a key stays indexed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: list[str] = []  # segment number -> file name
        self.numbers: dict[str, int] = {}
        self.count = 0  # keys indexed
        self._used = 0  # table slots taken (keys and dropped keys)
        self._alloc(1 << 10)
        self._fds: OrderedDict[int, int] = OrderedDict()  # segment number -> read descriptor
        self._fd_lock = threading.Lock()
        #: called with (key, "file@byte offset", reason) for a copy found corrupt on reading
        self.on_corrupt: Callable[[str, str, str], None] | None = None

    def _alloc(self, size: int) -> None:
        self._mask = size - 1
        self._tags = array("I", bytes(4 * size))  # 0: free
        self._locs = array("Q", bytes(8 * size))
        self._lengths = array("I", bytes(4 * size))  # body length + 1; 0: dropped

    def number(self, name: str) -> int:
        n = self.numbers.get(name)
        if n is None:
            n = self.numbers[name] = len(self.names)
            self.names.append(name)
        return n

    # -- reading -------------------------------------------------------------------------
    def _pread(self, loc: int, n: int) -> bytes:
        seg, offset = loc >> _SEG_SHIFT, loc & ((1 << _SEG_SHIFT) - 1)
        with self._fd_lock:
            fd = self._fds.get(seg)
            if fd is None:
                fd = self._fds[seg] = os.open(self.path / self.names[seg], os.O_RDONLY)
                while len(self._fds) > _OPEN_SEGMENTS:
                    os.close(self._fds.popitem(last=False)[1])
            else:
                self._fds.move_to_end(seg)
            return os.pread(fd, n, offset)

    def _read(self, key: str, loc: int, length: int) -> bytes | str | None:
        """The body at ``loc`` when the line there holds ``key`` intact; why not (a string)
        when it holds ``key`` but is no longer intact; None when it holds another key."""
        try:
            line = self._pread(loc, _BODY_AT + length)
        except OSError as exc:
            return f"unreadable ({exc})"
        if line[:64] != key.encode():
            return None
        if len(line) != _BODY_AT + length:
            return "truncated after it was indexed"
        body = line[_BODY_AT:]
        try:
            if zlib.crc32(body) == int(line[65:73], 16):
                return body
        except ValueError:
            pass
        return "checksum mismatch (changed after it was indexed)"

    def find(self, key: str) -> bytes | None:
        """The body stored for ``key`` (its first intact copy). A copy whose line changed since
        it was indexed is dropped and reported to :attr:`on_corrupt`."""
        tag, mask = _slot(key), self._mask
        tags, locs, lengths = self._tags, self._locs, self._lengths
        i = tag & mask
        while tags[i]:
            if tags[i] == tag and lengths[i]:
                got = self._read(key, locs[i], lengths[i] - 1)
                if isinstance(got, bytes):
                    return got
                if got is not None:
                    lengths[i] = 0
                    self.count -= 1
                    if self.on_corrupt is not None:
                        seg, offset = locs[i] >> _SEG_SHIFT, locs[i] & ((1 << _SEG_SHIFT) - 1)
                        self.on_corrupt(key, f"{self.path / self.names[seg]}@{offset}", got)
            i = (i + 1) & mask
        return None

    def __contains__(self, key: str) -> bool:
        return self.find(key) is not None

    # -- adding --------------------------------------------------------------------------
    def add(self, key: str, seg: int, offset: int, length: int) -> bool:
        """Index an intact line; False when the key is indexed already."""
        if key in self:
            return False
        if 3 * (self._used + 1) > 2 * (self._mask + 1):
            self._grow()
        self._put(_slot(key), seg << _SEG_SHIFT | offset, length + 1)
        self._used += 1
        self.count += 1
        return True

    def _put(self, tag: int, loc: int, length: int) -> None:
        mask, tags = self._mask, self._tags
        i = tag & mask
        while tags[i]:
            i = (i + 1) & mask
        tags[i] = tag
        self._locs[i] = loc
        self._lengths[i] = length

    def _grow(self) -> None:
        tags, locs, lengths = self._tags, self._locs, self._lengths
        self._alloc(2 * (self._mask + 1))
        self._used = 0
        for i in range(len(tags)):
            if tags[i] and lengths[i]:  # dropped keys are left behind
                self._put(tags[i], locs[i], lengths[i])
                self._used += 1

    def drop(self, key: str) -> None:
        """Forget ``key`` (its indexed copy is unreadable)."""
        tag, mask = _slot(key), self._mask
        i = tag & mask
        while self._tags[i]:
            if (
                self._tags[i] == tag
                and self._lengths[i]
                and self._pread(self._locs[i], 64) == key.encode()
            ):
                self._lengths[i] = 0
                self.count -= 1
            i = (i + 1) & mask

    def close(self) -> None:
        with self._fd_lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()


class _Partition:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.index = _Index(path)
        self.index.on_corrupt = self._corrupt_on_read
        self.offsets: dict[str, int] = {}  # segment file name -> bytes consumed
        self.lines: dict[str, int] = {}  # segment file name -> complete lines consumed
        self.own: str | None = None  # our own segment's file name (already indexed on write)
        self.corrupt: dict[str, list[str]] = {}  # key -> "file:line (reason)" of corrupt copies
        self.unkeyed: list[str] = []  # corrupt lines whose key is unreadable
        # segment file name -> (size, key or None, where) of its torn last line
        self.torn: dict[str, tuple[int, str | None, str]] = {}
        self.lock = threading.Lock()
        self._claim_lock = threading.Lock()  # flock does not exclude threads sharing one fd
        self._claims_fd: int | None = None
        self._claims_writable = False
        self._claims_broken = False  # claims.log cannot be written here (said once)
        self._warned = False
        self._claims_read = 0  # bytes of claims.log whose segments were read
        self.segment_reads = 0  # segments looked at for new lines (tests count the work)

    def _claims(self, *, create: bool) -> int | None:
        """Our descriptor of ``claims.log``: opened for appending (and created) with
        ``create``, else read-only and only where it exists."""
        if self._claims_fd is not None and (self._claims_writable or not create):
            return self._claims_fd
        path = self.path / CLAIMS_FILE
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        else:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                return None
        if self._claims_fd is not None:
            os.close(self._claims_fd)
        self._claims_fd, self._claims_writable = fd, create
        return fd

    def catch_up(self) -> int:
        """Index the lines of the segments named in ``claims.log`` since the last look (lines
        other processes stored meanwhile). Returns the count added."""
        with self.lock:
            fd = self._claims(create=False)
            if fd is None:
                return 0
            size = os.fstat(fd).st_size
            if size <= self._claims_read:
                return 0
            data = os.pread(fd, size - self._claims_read, self._claims_read)
            whole = data.rfind(b"\n") + 1  # a name being written now is read next time
            self._claims_read += whole
            names = {n for n in data[:whole].decode("utf-8", "replace").split("\n") if n}
            added = 0
            for name in sorted(names - {self.own}):
                if "/" not in name and (self.path / name).match(SEGMENT_GLOB):
                    added += self._refresh_segment(self.path / name)
            return added

    @contextlib.contextmanager
    def claim(self) -> Iterator[None]:
        """Hold the partition for a check-then-append, caught up with every claim before ours:
        this process's threads by a lock, other processes by an exclusive ``flock`` on
        ``claims.log``. Where that file cannot be written or locked, other processes are not
        excluded (said once): two jobs sending one request at once may then each keep their
        reply, and a replay reads the first stored."""
        with self._claim_lock:
            with self.lock:
                fd = self._writable_claims()
            locked = False
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    locked = True
                except OSError as exc:
                    self._unshared(f"cannot lock {self.path / CLAIMS_FILE} ({exc})")
            try:
                self.catch_up()
                yield
            finally:
                if locked:
                    assert fd is not None
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _writable_claims(self) -> int | None:
        if self._claims_broken:
            return None
        try:
            return self._claims(create=True)
        except OSError as exc:
            self._claims_broken = True
            self._unshared(f"cannot write {self.path / CLAIMS_FILE} ({exc})")
            return None

    def _unshared(self, why: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning(
                "%s: jobs storing the same request at once may each keep their own reply", why
            )

    def announce(self, name: str) -> None:
        """Name our segment in ``claims.log`` after appending to it (under :meth:`claim`)."""
        with self.lock:
            fd = self._writable_claims()
        if fd is None:
            return
        try:
            size = os.fstat(fd).st_size
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a writer killed mid-name
            os.write(fd, (b"\n" if torn else b"") + name.encode() + b"\n")
        except OSError as exc:  # the line is stored; others find it on a full refresh
            self._unshared(f"cannot append to {self.path / CLAIMS_FILE} ({exc})")

    def close(self) -> None:
        self.index.close()
        with self._claim_lock, self.lock:
            if self._claims_fd is not None:
                os.close(self._claims_fd)
                self._claims_fd = None

    def _corrupt_on_read(self, key: str, where: str, reason: str) -> None:
        # not under self.lock: a refresh holding it looks keys up too (dict updates are atomic)
        self.corrupt.setdefault(key, []).append(f"{where} ({reason})")
        log.warning("%s: skipping a corrupt response-store line: %s", where, reason)

    def _note_corrupt(self, key: str | None, where: str) -> None:
        if key is None:
            self.unkeyed.append(where)
        else:
            self.corrupt.setdefault(key, []).append(where)

    def refresh(self) -> int:
        """Index complete lines appended since the last refresh (any process). Returns count.
        Corrupt lines, and the torn last line of a segment no process writes any more, are
        skipped with a warning and remembered."""
        if not self.path.is_dir():
            return 0
        with self.lock:
            return self._refresh()

    def _refresh(self) -> int:
        # claims.log is measured first: a line it names later is appended after this scan
        # began, and catch_up() reads that segment again (a segment is appended to before it
        # is named)
        fd = self._claims(create=False)
        claimed = os.fstat(fd).st_size if fd is not None else 0
        added = 0
        for seg in sorted(self.path.glob(SEGMENT_GLOB)):
            if seg.name != self.own:
                added += self._refresh_segment(seg)
        self._claims_read = max(self._claims_read, claimed)
        return added

    def _refresh_segment(self, seg: Path) -> int:
        """Index the complete lines appended to ``seg`` since it was last read."""
        self.segment_reads += 1
        start = self.offsets.get(seg.name, 0)
        try:
            size = seg.stat().st_size
        except FileNotFoundError:
            return 0
        if size <= start:
            return 0
        added = 0
        lineno = self.lines.get(seg.name, 0)
        warned = 0
        number = self.index.number(seg.name)
        pos = start  # file offset of the next line
        tail = b""
        # Line by line (not the whole segment in memory): a job's memory stays flat.
        with open(seg, "rb") as fh:
            gone = _writer_gone(fh, seg.name)  # taken first: then what we read is final
            fh.seek(start)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    tail = raw  # unterminated: only the last line can be
                    break
                lineno += 1
                at, pos = pos, pos + len(raw)
                key, body, reason = inspect_line(raw[:-1])
                if body is None:
                    where = f"{seg}:{lineno}"
                    self._note_corrupt(key, f"{where} ({reason})")
                    warned += 1
                    if warned <= MAX_WARNINGS_PER_SEGMENT:
                        log.warning("%s: skipping a corrupt response-store line: %s", where, reason)
                    continue
                assert key is not None
                if self.index.add(key, number, at, len(body)):
                    added += 1
        if warned > MAX_WARNINGS_PER_SEGMENT:
            log.warning("%s: %d more corrupt lines skipped", seg, warned - MAX_WARNINGS_PER_SEGMENT)
        self.offsets[seg.name] = pos
        self.lines[seg.name] = lineno
        return added + self._check_tail(seg, pos + len(tail), tail, lineno + 1, gone)

    def _check_tail(self, seg: Path, size: int, tail: bytes, lineno: int, gone: bool) -> int:
        """Look at the unterminated tail of a segment whose writer is gone (so it is final):
        a line that lacks only its newline is indexed, anything else is reported once.
        Returns the count of entries added."""
        if not tail or not gone:
            self.torn.pop(seg.name, None)
            return 0
        key, body, reason = inspect_line(tail)
        if body is not None:
            assert key is not None
            self.torn.pop(seg.name, None)
            return int(
                self.index.add(key, self.index.number(seg.name), size - len(tail), len(body))
            )
        if self.torn.get(seg.name, (-1,))[0] == size:
            return 0  # reported already
        reason = f"torn last line ({reason})"
        self.torn[seg.name] = (size, key, f"{seg}:{lineno} ({reason})")
        log.warning("%s:%d: skipping a corrupt response-store line: %s", seg, lineno, reason)
        return 0

    def locate(self, key: str) -> str:
        """``file:line`` of the first intact line holding ``key`` (for error messages)."""
        for seg in sorted(self.path.glob(SEGMENT_GLOB)):
            try:
                data = seg.read_bytes()
            except OSError:
                continue
            for lineno, line in enumerate(data.split(b"\n"), start=1):
                if line[:64] == key.encode() and decode_line(line) is not None:
                    return f"{seg}:{lineno}"
        return f"{self.path}/?"

    def drop_unreadable(self, key: str, reason: str) -> None:
        """Forget an indexed entry whose record cannot be read, with a warning."""
        where = self.locate(key)
        with self.lock:
            self.index.drop(key)
            self.corrupt.setdefault(key, []).append(f"{where} ({reason})")
        log.warning("%s: skipping a corrupt response-store line: %s", where, reason)


class ResponseStore:
    """Exact-match response cache shared by all jobs through the file system."""

    def __init__(self, root: str | Path, *, durable: bool = True, readonly: bool = False) -> None:
        self.root = Path(root)
        self.durable = durable
        self.readonly = readonly
        self._partitions: dict[str, _Partition] = {}
        self._segments: dict[str, _Segment] = {}
        self._lock = threading.Lock()
        # a store that is dropped unclosed (a test, a library user) gives its descriptors back
        weakref.finalize(self, _release, self._partitions, self._segments)

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
        """The stored response for ``key``, including what other processes stored and named in
        ``claims.log`` since the last look; with ``refresh``, also look at every segment for
        lines appended since this partition was loaded (a writer that names none)."""
        part = self._partition(partition)
        body = part.index.find(key)
        if body is None and part.catch_up():
            body = part.index.find(key)
        if body is None and refresh and part.refresh():
            body = part.index.find(key)
        if body is None:
            return None
        record = self._record(part, key, body)
        if record is None:
            return None
        try:
            return StoredResponse.from_dict(record["response"])
        except (KeyError, TypeError, ValueError) as exc:
            part.drop_unreadable(key, f"not a stored response ({type(exc).__name__}: {exc})")
            return None

    @staticmethod
    def _record(part: _Partition, key: str, body: bytes) -> dict[str, Any] | None:
        try:
            record = json.loads(body)
        except ValueError as exc:
            part.drop_unreadable(key, f"not JSON ({exc})")
            return None
        if not isinstance(record, dict):
            part.drop_unreadable(key, "not a JSON object")
            return None
        return record

    def describe_corrupt(self, partition: str, key: str) -> str | None:
        """Why ``key`` may be missing although it was stored: where a corrupt copy of its entry
        was found, or else which corrupt lines with an unreadable key might have held it;
        ``None`` when the partition showed no corruption of either kind."""
        part = self._partition(partition)
        with part.lock:
            torn = list(part.torn.values())
            found = list(part.corrupt.get(key, ())) + [w for _, k, w in torn if k == key]
            unkeyed = part.unkeyed + [w for _, k, w in torn if k is None]
        if found:
            return "the entry was present but corrupt at " + "; ".join(found)
        if unkeyed:
            shown = "; ".join(unkeyed[:5]) + ("; ..." if len(unkeyed) > 5 else "")
            return (
                f"{len(unkeyed)} corrupt line(s) whose key is unreadable may have held the "
                f"entry: {shown}"
            )
        return None

    def _claim(
        self, partition: str, key: str, record: dict[str, Any]
    ) -> tuple[_Segment | None, int, StoredResponse]:
        """Store ``record`` under ``key`` unless a copy is stored already (by any process).
        Returns our segment and line sequence to sync (``None`` when nothing was written) and
        the response that now stands for ``key``."""
        if self.readonly:
            raise PermissionError("the response store is read-only (replay mode)")
        response = record.get("response") or {}
        if not str(response.get("text") or "").strip():
            raise ValueError("refusing to store an empty response")
        ours = StoredResponse.from_dict(response)
        part = self._partition(partition)
        with part.claim():
            body = part.index.find(key)
            if body is not None:
                stored = self._record(part, key, body)
                if stored is not None:
                    try:
                        first = StoredResponse.from_dict(stored["response"])
                    except (KeyError, TypeError, ValueError) as exc:
                        part.drop_unreadable(
                            key, f"not a stored response ({type(exc).__name__}: {exc})"
                        )
                    else:
                        log.debug("key %s was stored first by another call: using it", key[:16])
                        return None, 0, first
            seg = self._segment(partition, part)
            line = encode_line(key, record)
            seq, at = seg.append(line)
            assert part.own is not None
            with part.lock:
                part.index.add(key, part.index.numbers[part.own], at, len(line) - _BODY_AT - 1)
            part.announce(part.own)
        return seg, seq, ours

    def _segment(self, partition: str, part: _Partition) -> _Segment:
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
                    part.index.number(name)
                    self._segments[partition] = seg
        return seg

    async def put(self, partition: str, key: str, record: dict[str, Any]) -> StoredResponse:
        """Store ``record`` (which must hold a non-empty ``response.text``) and wait until it
        is durable. Returns the response stored under ``key``: ours, or the copy another call
        stored first, which the caller must use in place of its own."""
        seg, seq, response = self._claim(partition, key, record)
        if seg is not None:
            await seg.sync_through(seq)
        return response

    def put_sync(self, partition: str, key: str, record: dict[str, Any]) -> StoredResponse:
        seg, _, response = self._claim(partition, key, record)
        if seg is not None:
            seg.sync_now()
        return response

    def __len__(self) -> int:
        return sum(p.index.count for p in self._partitions.values())

    def load_all(self) -> int:
        """Load every partition on disk (for statistics and tests). Returns the entry count."""
        if self.root.is_dir():
            for d in sorted(self.root.iterdir()):
                if d.is_dir():
                    self._partition(d.name)
        return len(self)

    def close(self) -> None:
        """Sync and close our segments and every descriptor the store holds (a store dropped
        without it is closed when it is collected). It may be used again after."""
        with self._lock:
            _release(self._partitions, self._segments)


def _release(partitions: dict[str, _Partition], segments: dict[str, _Segment]) -> None:
    for seg in list(segments.values()):
        seg.close()
    segments.clear()
    for part in list(partitions.values()):
        part.close()
