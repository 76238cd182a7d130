"""Bad input at every door stops with file, line (or task) and field, printed one problem a
line and no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lecode.corpus.errors import reported
from lecode.corpus.review import ReviewError, import_review
from lecode.corpus.transcripts import TranscriptError, read_transcript_file
from tests.test_corpus_review import H1, PRE1, PRE2


def problems_of(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(TranscriptError) as err:
        read_transcript_file(p)
    return str(err.value)


def test_transcript_doors(tmp_path: Path) -> None:
    gbk = problems_of(tmp_path, "g.txt", "说话人1：你好\n".encode("gbk"))
    assert f"{tmp_path / 'g.txt'}:0: field '<encoding>': not UTF-8" in gbk
    assert "field 'turns': no speaker-tagged text" in problems_of(tmp_path, "e.srt", b"")
    cue = problems_of(
        tmp_path,
        "c.vtt",
        "WEBVTT\n\n00:01.000 --> 00:02.000\n说话人1：好\n\n"
        "00:O3.000 --> 00:04.000\n说话人2：嗯\n".encode(),
    )
    assert f"{tmp_path / 'c.vtt'}:6: field 'timing'" in cue


def test_review_doors(tmp_path: Path) -> None:
    d = tmp_path / "x"
    d.mkdir()
    (d / "d1.stage1.csv").write_text("row,speaker,text\n0,用户,问\n", encoding="utf-8")
    (d / "d2.stage1.csv").write_text(H1 + "0,用户,问,11\n", encoding="utf-8")
    (d / "d3.stage1.csv").write_text(H1 + "0,用户,问,1\n", encoding="utf-8")
    with pytest.raises(ReviewError) as err:
        import_review(sorted(d.iterdir()), "x", PRE1, PRE2)
    text = str(err.value)
    assert f"{d / 'd1.stage1.csv'}:1: field '<header>'" in text
    assert f"{d / 'd2.stage1.csv'}:2: field 'intent': '11' is not an intent 1-10" in text
    assert f"{d / 'd3.stage1.csv'}:0: field 'id': no pre-annotated dialogue 'd3'" in text


def test_errors_are_printed_one_a_line_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "x"
    d.mkdir()
    (d / "d2.stage1.csv").write_text(H1 + "0,用户,问,11\n9,律师,答,7\n", encoding="utf-8")
    with pytest.raises(SystemExit) as done, reported("corpus_assemble"):
        import_review([d / "d2.stage1.csv"], "x", PRE1, PRE2)
    assert done.value.code == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"corpus_assemble: {d / 'd2.stage1.csv'}:2: field 'intent': '11' is not an intent 1-10",
        f"corpus_assemble: {d / 'd2.stage1.csv'}:3: field 'row': '9' is not a row of the "
        "pre-annotation",
    ]


def test_a_step_script_exits_with_its_problems_and_no_traceback(tmp_path: Path) -> None:
    """The roles step of a shard whose transcript has a malformed cue, run as Snakemake runs
    its scripts (a process of its own)."""
    srt = tmp_path / "t.srt"
    srt.write_text("1\n00:00:01,000 -> 00:00:02,000\n说话人1：好\n", encoding="utf-8")
    code = f"""
import json
from lecode.corpus.errors import reported
from lecode.corpus.annotate import run
from lecode.corpus.specs import RolesSpec
from lecode.specs import FileRef
spec = RolesSpec(shard="000", transcripts=(FileRef.of({str(srt)!r}),), annotator=None, code="t")
with reported("corpus_roles"):
    run("roles", spec, previous=None, out={str(tmp_path / "o.jsonl")!r})
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert (
        done.stderr.strip() == f"corpus_roles: {srt}:2: field 'timing': not a cue timing "
        "'HH:MM:SS,mmm --> HH:MM:SS,mmm': '00:00:01,000 -> 00:00:02,000' "
        "(the cue's text would be lost)"
    )
