"""Transcript readers: the three input shapes, and errors that name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from lecode.corpus.transcripts import (
    TranscriptError,
    read_transcript_file,
    read_transcripts,
    transcript_files,
)

REPO = Path(__file__).resolve().parent.parent


def test_json_and_jsonl_turns(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"id": "d1", "turns": [["A", "我被欠薪了"], {"speaker": "B", "text": "多久了？"}]}\n'
        "\n"
        '{"id": "d2", "turns": [["A", "你好"], ["B", "请讲"]]}\n',
        encoding="utf-8",
    )
    (tmp_path / "b.json").write_text(
        '{"id": "d3", "turns": [{"speaker": 1, "text": "问"}, {"speaker": 2, "text": "答"}]}',
        encoding="utf-8",
    )
    got = read_transcripts(transcript_files(tmp_path))
    assert [t.id for t in got] == ["d1", "d2", "d3"]
    assert [(x.speaker, x.text) for x in got[0].turns] == [("A", "我被欠薪了"), ("B", "多久了？")]
    assert got[0].turns[1].line == 1 and got[1].turns[0].line == 3
    assert got[2].speakers == ["1", "2"]


def test_srt_vtt_and_plain_text(tmp_path: Path) -> None:
    srt = tmp_path / "s1.srt"
    srt.write_text(
        "1\n00:00:01,000 --> 00:00:02,000\n说话人1：我骑车被撞了，\n腿骨折了。\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\n[说话人2] 交警怎么认定的？\n",
        encoding="utf-8",
    )
    vtt = tmp_path / "v1.vtt"
    vtt.write_text(
        "WEBVTT\n\n00:01.000 --> 00:02.000\n<v 说话人2>押金不退怎么办？\n\n"
        "00:02.500 --> 00:03.000\n<v 说话人1>合同怎么约定的？</v>\n",
        encoding="utf-8",
    )
    txt = tmp_path / "p1.txt"
    txt.write_text(
        "说话人1：我儿子被带走了\n会坐牢吗？\nSPEAKER_02: 他做了什么？\n", encoding="utf-8"
    )
    (s,) = read_transcript_file(srt)
    assert s.id == "s1"
    assert [(t.speaker, t.text) for t in s.turns] == [
        ("说话人1", "我骑车被撞了，腿骨折了。"),
        ("说话人2", "交警怎么认定的？"),
    ]
    (v,) = read_transcript_file(vtt)
    assert [(t.speaker, t.text) for t in v.turns] == [
        ("说话人2", "押金不退怎么办？"),
        ("说话人1", "合同怎么约定的？"),
    ]
    (p,) = read_transcript_file(txt)
    assert [(t.speaker, t.text) for t in p.turns] == [
        ("说话人1", "我儿子被带走了会坐牢吗？"),
        ("SPEAKER_02", "他做了什么？"),
    ]


def test_every_problem_is_named_with_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "x1", "turns": [["A", "ok"], {"speaker": "B"}]}\n'
        "{not json\n"
        '{"id": "x 2", "turns": [["A", "ok"]]}\n',
        encoding="utf-8",
    )
    untagged = tmp_path / "u.txt"
    untagged.write_text("没有说话人标记的一行\n说话人1：好\n", encoding="utf-8")
    with pytest.raises(TranscriptError) as err:
        read_transcripts([bad, untagged])
    text = str(err.value)
    assert f"{bad}:1: field 'turns[1].text'" in text
    assert f"{bad}:2: field '<json>'" in text
    assert f"{bad}:3: field 'id'" in text
    assert f"{untagged}:1: field 'speaker'" in text
    assert len(err.value.problems) == 4


def test_duplicate_ids_across_files_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "d1.txt").write_text("A：问\nB：答\n", encoding="utf-8")
    (tmp_path / "x.jsonl").write_text('{"id": "d1", "turns": [["A", "问"]]}\n', encoding="utf-8")
    with pytest.raises(TranscriptError, match="field 'id'.*repeats"):
        read_transcripts(transcript_files(tmp_path))


def test_the_shipped_transcripts_cover_every_shape() -> None:
    files = transcript_files(REPO / "data" / "transcripts")
    assert {f.suffix for f in files} == {".json", ".jsonl", ".srt", ".vtt", ".txt"}
    assert len(read_transcripts(files)) == 6


def test_corpus_check_lists_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lecode.cli import main

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "ok.txt").write_text("A：问\nB：答\n", encoding="utf-8")
    (tmp_path / "t" / "bad.txt").write_text("无标记\n", encoding="utf-8")
    extra = tmp_path / "extra.yaml"
    extra.write_text(f"corpus: {{transcripts: {tmp_path / 't'}}}\n", encoding="utf-8")
    assert (
        main(["corpus", "check", "--params", str(REPO / "params.yaml"), "--params", str(extra)])
        == 1
    )
    out = capsys.readouterr().out
    assert f"{tmp_path / 't' / 'bad.txt'}:1: field 'speaker'" in out
    (tmp_path / "t" / "bad.txt").unlink()
    assert (
        main(["corpus", "check", "--params", str(REPO / "params.yaml"), "--params", str(extra)])
        == 0
    )
    assert "transcripts: 1 in 1 file(s), valid" in capsys.readouterr().out
