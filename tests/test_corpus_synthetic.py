"""The synthetic transcripts of the corpus benchmark: every accepted shape, seeded, read and
pre-annotated without a problem."""

from __future__ import annotations

from pathlib import Path

from lecode.corpus import rules
from lecode.corpus.synthetic import write_synthetic
from lecode.corpus.transcripts import read_transcripts, transcript_files


def test_synthetic_transcripts_are_seeded_and_in_every_shape(tmp_path: Path) -> None:
    write_synthetic(tmp_path / "a", 40, seed=1)
    write_synthetic(tmp_path / "b", 40, seed=1)
    files = transcript_files(tmp_path / "a")
    assert {f.suffix for f in files} == {".txt", ".srt", ".vtt", ".json", ".jsonl"}
    got = read_transcripts(files)
    assert sorted(t.id for t in got) == [f"syn-{k:05d}" for k in range(40)]
    for f in files:
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes()
    for t in got:
        s1 = rules.stage1(rules.identify_roles(t))
        assert s1.dialogue[0].intent == 1 and s1.dialogue[-1].speaker == "lawyer"
        assert rules.stage2(s1).facts
