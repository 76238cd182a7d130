"""The response store: durable, append-only, many writers, torn lines ignored, no errors."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lecode.llm.store import ResponseStore, decode_line, encode_line

PART = "model-abc"


def record(i: int, text: str | None = None) -> dict[str, object]:
    return {"response": {"text": f"回复{i}" if text is None else text, "prompt_tokens": i}}


def key(i: int) -> str:
    return f"{i:064x}"


def test_roundtrip_and_reload(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    asyncio.run(store.put(PART, key(1), record(1)))
    store.put_sync(PART, key(2), record(2))
    assert store.get(PART, key(1)).text == "回复1"
    store.close()
    again = ResponseStore(tmp_path)
    assert again.get(PART, key(2)).prompt_tokens == 2
    assert again.get(PART, key(3)) is None
    assert again.load_all() == 2


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_responses_are_never_stored(tmp_path: Path, text: str) -> None:
    store = ResponseStore(tmp_path)
    with pytest.raises(ValueError):
        store.put_sync(PART, key(1), record(1, text))
    assert store.get(PART, key(1)) is None
    assert not list(tmp_path.rglob("seg-*.jsonl")) or all(
        p.stat().st_size == 0 for p in tmp_path.rglob("seg-*.jsonl")
    )


def test_readonly_store_refuses_writes(tmp_path: Path) -> None:
    with pytest.raises(PermissionError):
        ResponseStore(tmp_path, readonly=True).put_sync(PART, key(1), record(1))


def test_torn_and_corrupt_lines_are_ignored(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    store.put_sync(PART, key(1), record(1))
    store.close()
    seg = next((tmp_path / PART).glob("seg-*.jsonl"))
    good = encode_line(key(2), record(2))
    corrupt = encode_line(key(3), record(3)).replace("回复3".encode(), "回复X".encode())
    with open(seg, "ab") as fh:
        fh.write(corrupt)  # checksum no longer matches
        fh.write(good[:-20])  # torn last line, as after kill -9
    again = ResponseStore(tmp_path)
    assert again.get(PART, key(1)) is not None
    assert again.get(PART, key(3)) is None
    assert again.get(PART, key(2)) is None
    assert decode_line(good[:-1]) is not None and decode_line(b"garbage") is None


def test_other_processes_writes_are_seen_on_the_next_lookup(tmp_path: Path) -> None:
    reader = ResponseStore(tmp_path)
    assert reader.get(PART, key(5)) is None
    writer = ResponseStore(tmp_path)
    writer.put_sync(PART, key(5), record(5))
    # named in claims.log: the reader catches up on a miss, reading only that segment
    before = reader._partition(PART).segment_reads
    assert reader.get(PART, key(5)).text == "回复5"
    assert reader._partition(PART).segment_reads == before + 1
    # a line no writer named (appended by hand) is found only by a full refresh
    seg = next((tmp_path / PART).glob("seg-*.jsonl"))
    with open(seg, "ab") as fh:
        fh.write(encode_line(key(6), record(6)))
    assert reader.get(PART, key(6)) is None
    assert reader.get(PART, key(6), refresh=True).text == "回复6"


def test_a_writer_catches_up_on_what_was_added_not_on_the_store(tmp_path: Path) -> None:
    # 40 finished jobs' segments, then a job that stores 30 responses while one other job
    # stores 30: it reads the other job's segment once per put at most, never the 40 others
    for job in range(40):
        old = ResponseStore(tmp_path)
        old.put_sync(PART, key(1000 + job), record(job))
        old.close()
    mine, other = ResponseStore(tmp_path), ResponseStore(tmp_path)
    assert mine.get(PART, key(0)) is None and other.get(PART, key(0)) is None
    part = mine._partition(PART)
    loaded = part.segment_reads
    assert loaded == 40
    for i in range(30):
        other.put_sync(PART, key(i), record(i))
        mine.put_sync(PART, key(100 + i), record(i))
    assert part.segment_reads - loaded == 30
    assert mine.get(PART, key(29)).text == "回复29"
    assert part.segment_reads - loaded == 30  # already caught up: no read on a hit


def test_a_key_stored_by_another_process_first_is_the_one_every_caller_gets(
    tmp_path: Path,
) -> None:
    # two jobs, both loaded before either stored: each sent the request, the second to store
    # it is handed the first's response, and only that one is on disk
    first, second = ResponseStore(tmp_path), ResponseStore(tmp_path)
    assert first.get(PART, key(7)) is None and second.get(PART, key(7)) is None
    assert first.put_sync(PART, key(7), record(7, "甲")).text == "甲"
    assert asyncio.run(second.put(PART, key(7), record(7, "乙"))).text == "甲"
    assert second.get(PART, key(7)).text == "甲"
    # and a second call in one process is handed its own first copy
    assert second.put_sync(PART, key(8), record(8, "丙")).text == "丙"
    assert second.put_sync(PART, key(8), record(8, "丁")).text == "丙"
    first.close()
    second.close()
    lines = [
        line
        for seg in (tmp_path / PART).glob("seg-*.jsonl")
        for line in seg.read_bytes().splitlines()
    ]
    assert sorted(line[:64].decode() for line in lines) == [key(7), key(8)]
    assert ResponseStore(tmp_path).get(PART, key(7)).text == "甲"


RACER = textwrap.dedent(
    """
    import asyncio, json, sys
    from lecode.llm.store import ResponseStore
    root, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = ResponseStore(root)
    async def main():
        got = {}
        for i in range(n):
            k = f"{i:064x}"
            store.get("model-abc", k)  # loaded before the others stored: no refresh
            got[k] = (await store.put("model-abc", k, {"response": {"text": f"w{wid}-{i}"}})).text
        print(json.dumps(got))
    asyncio.run(main())
    """
)


def run_writers(tmp_path: Path, source: str, writers: int, n: int) -> list[str]:
    """Start ``writers`` processes of ``source`` (root, writer id, count) at once on the store
    ``tmp_path/s``; their standard outputs."""
    script = tmp_path / "writer.py"
    script.write_text(source)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "s"), str(w), str(n)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    return outs


def test_processes_racing_on_the_same_keys_all_use_the_one_stored(tmp_path: Path) -> None:
    answers = [json.loads(out) for out in run_writers(tmp_path, RACER, 4, 100)]
    store = ResponseStore(tmp_path / "s")
    assert store.load_all() == 100
    for i in range(100):
        stored = store.get(PART, key(i)).text
        assert [a[key(i)] for a in answers] == [stored] * 4, i
    on_disk = [
        line[:64]
        for seg in (tmp_path / "s" / PART).glob("seg-*.jsonl")
        for line in seg.read_bytes().splitlines()
    ]
    assert len(on_disk) == 100  # one copy of each key, whoever won it


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from lecode.llm.store import ResponseStore
    root, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = ResponseStore(root)
    async def main():
        for i in range(n):
            k = f"{wid:08x}{i:056x}"
            await store.put("model-abc", k, {"response": {"text": f"w{wid}-{i}" * 50}})
            print(i, flush=True)
    asyncio.run(main())
    """
)


def test_many_processes_write_at_once(tmp_path: Path) -> None:
    run_writers(tmp_path, WRITER, 6, 150)
    store = ResponseStore(tmp_path / "s")
    assert store.load_all() == 6 * 150
    assert store.get(PART, f"{3:08x}{149:056x}").text == "w3-149" * 50
    assert len(list((tmp_path / "s" / PART).glob("seg-*.jsonl"))) == 6


def test_kill_9_loses_nothing_acknowledged(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "s"), "1", "100000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acknowledged = -1
    deadline = time.monotonic() + 60
    while acknowledged < 300 and time.monotonic() < deadline:
        acknowledged = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = ResponseStore(tmp_path / "s")
    n = store.load_all()
    assert n >= acknowledged + 1
    for i in range(acknowledged + 1):
        assert store.get(PART, f"{1:08x}{i:056x}") is not None
    # a new writer appends to its own segment; the store stays consistent
    store.put_sync(PART, key(99), record(99))
    assert ResponseStore(tmp_path / "s").load_all() == n + 1


def test_a_claims_log_that_cannot_be_written_is_said_once_and_storing_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / PART / "claims.log").mkdir(parents=True)  # not a file: opening it fails
    store = ResponseStore(tmp_path)
    for i in range(3):
        assert store.put_sync(PART, key(i), record(i)).text == f"回复{i}"
    assert store.put_sync(PART, key(0), record(0, "又一次")).text == "回复0"  # same process
    warnings = [r.getMessage() for r in caplog.records if "claims.log" in r.getMessage()]
    assert len(warnings) == 1 and "each keep their own reply" in warnings[0], warnings
    store.close()
    assert ResponseStore(tmp_path).load_all() == 3


def test_a_store_dropped_unclosed_gives_its_descriptors_back(tmp_path: Path) -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    writer = ResponseStore(tmp_path)
    writer.put_sync(PART, key(1), record(1))
    writer.close()
    before = open_fds()
    for i in range(50):
        store = ResponseStore(tmp_path)
        assert store.get(PART, key(1)) is not None  # a read descriptor, claims.log
        store.put_sync(PART, key(100 + i), record(i))  # a segment
        del store
    assert open_fds() == before
