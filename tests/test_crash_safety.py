"""Crash safety of the two append-only files: the dialogue journal and the response store.

Both are cut at every byte offset of their last line (what ``kill -9`` mid-write leaves) and
corrupted in a middle line: reading never raises, warns naming ``file:line``, keeps every
intact record, and the next append is read back intact.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import zlib
from pathlib import Path

import pytest

from lecode.dataset import load_cases
from lecode.evaluation.consultations import DialogueJournal
from lecode.llm.errors import ReplayMissError
from lecode.llm.store import ResponseStore, encode_line
from lecode.records import Transcript, Turn
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import mock_endpoint, model_cfg, runtime, simulate

PART = "model-abc"


# -- the dialogue journal ---------------------------------------------------------------------
def transcript(i: int) -> Transcript:
    return Transcript(
        case_id=f"c{i}",
        expert="e",
        strategy="zero_shot",
        client="c",
        turns=(
            Turn(speaker="client", kind="query", text=f"我朋友打架被抓了，怎么办？第{i}号"),
            Turn(speaker="lawyer", kind="advice", text="建议尽快赔偿取得谅解，争取缓刑。"),
        ),
        stop_reason="advice",
    )


def journal_with(path: Path, n: int) -> list[bytes]:
    journal = DialogueJournal(path)
    for i in range(1, n + 1):
        journal.append(transcript(i))
    return path.read_bytes().split(b"\n")[:-1]


def warnings_naming(caplog: pytest.LogCaptureFixture, where: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and where in r.getMessage()
    ]


def test_journal_cut_at_every_byte_of_the_last_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "journal.jsonl"
    lines = journal_with(path, 4)
    full = path.read_bytes()
    head = len(full) - len(lines[3]) - 1  # the offset where line 4 begins
    assert any(b >= 0x80 for b in lines[3])  # multi-byte characters: cuts land inside them
    for cut in range(len(lines[3]) + 1):
        path.write_bytes(full[: head + cut])
        path.with_name("journal.jsonl.torn").unlink(missing_ok=True)
        journal = DialogueJournal(path)
        caplog.clear()
        done = journal.load()
        complete = cut == len(lines[3])  # only the newline is missing: the record is whole
        torn = 0 < cut < len(lines[3])
        assert {"c1", "c2", "c3"} <= set(done), cut
        assert ("c4" in done) == complete, cut
        assert bool(warnings_naming(caplog, f"{path}:4")) == torn, cut
        journal.append(transcript(5))
        caplog.clear()
        again = DialogueJournal(path).load()
        assert not warnings_naming(caplog, str(path)), cut
        assert again["c5"] == transcript(5), cut
        assert {"c1", "c2", "c3", "c5"} <= set(again) and ("c4" in again) == complete, cut
        assert path.read_bytes().startswith(full[:head])
        torn_copy = path.with_name("journal.jsonl.torn")
        assert (
            (torn_copy.read_bytes() == lines[3][:cut] + b"\n") if torn else not torn_copy.exists()
        )


@pytest.mark.parametrize(
    "damage",
    [
        lambda line: line[: len(line) // 2 + 1],  # torn mid-line, a record appended onto it
        lambda line: line[:-3] + b"\xe5",  # not UTF-8
        lambda line: b"\x00" * len(line),  # zero-filled block after a power loss
        lambda line: line[:40].decode("utf-8", "ignore").encode() + b"}",  # not JSON
        lambda line: b'{"case_id": "c2"}',  # JSON, not a transcript
    ],
)
def test_journal_bad_middle_line_is_skipped_with_its_line_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: object
) -> None:
    path = tmp_path / "journal.jsonl"
    lines = journal_with(path, 4)
    lines[1] = damage(lines[1])  # type: ignore[operator]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    done = DialogueJournal(path).load()
    assert set(done) == {"c1", "c3", "c4"}
    assert warnings_naming(caplog, f"{path}:2")
    DialogueJournal(path).append(transcript(5))
    assert set(DialogueJournal(path).load()) == {"c1", "c3", "c4", "c5"}


def test_journal_missing_file_and_blank_lines(tmp_path: Path) -> None:
    assert DialogueJournal(tmp_path / "none.jsonl").load() == {}
    path = tmp_path / "journal.jsonl"
    lines = journal_with(path, 2)
    path.write_bytes(lines[0] + b"\n\n" + lines[1] + b"\n")
    assert set(DialogueJournal(path).load()) == {"c1", "c2"}


# -- the response store -----------------------------------------------------------------------
def record(i: int) -> dict[str, object]:
    return {"response": {"text": f"回复{i}：建议尽快赔偿取得谅解", "prompt_tokens": i}}


def key(i: int) -> str:
    return f"{i:064x}"


def store_with(root: Path, n: int) -> Path:
    store = ResponseStore(root)
    for i in range(1, n + 1):
        store.put_sync(PART, key(i), record(i))
    store.close()
    return next((root / PART).glob("seg-*.jsonl"))


def test_store_cut_at_every_byte_of_the_last_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seg = store_with(tmp_path / "s", 4)
    full = seg.read_bytes()
    last = full.split(b"\n")[3]
    head = len(full) - len(last) - 1
    for cut in range(len(last) + 1):
        root = tmp_path / f"cut{cut}"
        (root / PART).mkdir(parents=True)
        cut_seg = root / PART / seg.name
        cut_seg.write_bytes(full[: head + cut])
        caplog.clear()
        store = ResponseStore(root)
        complete = cut == len(last)  # only the newline is missing: checksummed and whole
        torn = 0 < cut < len(last)
        for i in (1, 2, 3):
            assert store.get(PART, key(i)) == ResponseStore(tmp_path / "s").get(PART, key(i))
        assert (store.get(PART, key(4)) is not None) == complete, cut
        assert bool(warnings_naming(caplog, f"{cut_seg}:4")) == torn, cut
        if torn:
            note = store.describe_corrupt(PART, key(4))
            assert note is not None and f"{cut_seg}:4" in note, cut
        store.put_sync(PART, key(5), record(5))
        store.close()
        again = ResponseStore(root)
        assert again.get(PART, key(5)).text == "回复5：建议尽快赔偿取得谅解", cut
        assert again.load_all() == 4 + complete, cut


def corrupt_body(line: bytes) -> bytes:
    return line.replace("回复2".encode(), "回复X".encode())


def bad_json(line: bytes) -> bytes:
    body = b'{"response": {"text": "x"'
    return b"%s\t%08x\t%s" % (line[:64], zlib.crc32(body), body)


@pytest.mark.parametrize(
    ("damage", "keyed"),
    [
        (corrupt_body, True),  # checksum mismatch
        (lambda line: line[:100], True),  # torn after the key, the next line appended onto it
        (lambda line: line[:30], False),  # torn inside the key
        (lambda line: b"\x00" * len(line), False),  # zero-filled block
        (lambda line: b"\xff" * 64 + line[64:], False),  # key bytes not UTF-8
        (lambda line: line[:-3] + b"\xe5", True),  # body bytes changed, not UTF-8
    ],
)
def test_store_bad_middle_line_is_reported_and_remembered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: object, keyed: bool
) -> None:
    seg = store_with(tmp_path, 4)
    lines = seg.read_bytes().split(b"\n")[:-1]
    lines[1] = damage(lines[1])  # type: ignore[operator]
    seg.write_bytes(b"".join(line + b"\n" for line in lines))
    store = ResponseStore(tmp_path)
    assert store.load_all() == 3
    assert [store.get(PART, key(i)) is not None for i in (1, 2, 3, 4)] == [True, False, True, True]
    assert warnings_naming(caplog, f"{seg}:2")
    note = store.describe_corrupt(PART, key(2))
    assert note is not None and f"{seg}:2" in note
    assert ("present but corrupt" in note) == keyed
    assert store.describe_corrupt(PART, key(1)) == (None if keyed else note)


def test_store_bad_json_with_a_good_checksum(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seg = store_with(tmp_path, 3)
    lines = seg.read_bytes().split(b"\n")[:-1]
    lines[1] = bad_json(lines[1])
    seg.write_bytes(b"".join(line + b"\n" for line in lines))
    store = ResponseStore(tmp_path)
    assert store.get(PART, key(2)) is None  # no exception
    assert warnings_naming(caplog, f"{seg}:2")
    assert f"{seg}:2" in (store.describe_corrupt(PART, key(2)) or "")
    assert store.get(PART, key(3)) is not None


def test_store_tail_of_a_live_writer_is_not_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = ResponseStore(tmp_path)
    writer.put_sync(PART, key(1), record(1))
    seg = next((tmp_path / PART).glob("seg-*.jsonl"))
    line = encode_line(key(2), record(2))
    with open(seg, "ab") as fh:  # a line in flight, as a reader may see it
        fh.write(line[:50])
    reader = ResponseStore(tmp_path)
    assert reader.get(PART, key(1)) is not None and reader.get(PART, key(2)) is None
    assert not warnings_naming(caplog, str(seg))
    with open(seg, "ab") as fh:
        fh.write(line[50:])
    assert reader.get(PART, key(2), refresh=True) is not None
    writer.close()


def test_store_failed_write_does_not_swallow_the_next_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResponseStore(tmp_path)
    store.put_sync(PART, key(1), record(1))
    real_write = os.write
    calls = {"n": 0}

    def half_then_fail(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[:20])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_fail)
    with pytest.raises(OSError):
        store.put_sync(PART, key(2), record(2))
    monkeypatch.setattr(os, "write", real_write)
    store.put_sync(PART, key(3), record(3))
    store.close()
    again = ResponseStore(tmp_path)
    assert again.get(PART, key(3)) is not None and again.get(PART, key(2)) is None
    assert again.load_all() == 2


def test_replay_miss_names_the_corrupt_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(1)))
    with mock_endpoint(tmp_path / "cases.jsonl", monkeypatch) as mock:
        url = mock.url
        rt = runtime(tmp_path / "store")
        asyncio.run(simulate(cases, rt, model_cfg(url)))
        rt.close()
    segs = sorted((tmp_path / "store").glob("mock-expert-*/seg-*.jsonl"))
    assert len(segs) == 1
    lines = segs[0].read_bytes().split(b"\n")
    first = json.loads(lines[0].split(b"\t", 2)[2])
    assert first["role"] == "expert"  # the first request of the dialogue
    lines[0] = lines[0][:-2] + b"!}"  # the checksum no longer matches
    segs[0].write_bytes(b"\n".join(lines))
    rt = runtime(tmp_path / "store", replay=True)
    with pytest.raises(ReplayMissError) as info:
        asyncio.run(simulate(cases, rt, model_cfg(url)))  # the endpoint is gone
    message = str(info.value)
    assert info.value.key == first["key"]
    assert f"present but corrupt at {segs[0]}:1 (checksum mismatch)" in message
    assert rt.network_calls == 0
    rt.close()
