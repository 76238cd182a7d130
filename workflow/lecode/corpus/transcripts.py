"""Speaker-diarised transcripts in the shapes people have, read into :class:`RawTranscript`.

Supported files (by suffix):

- ``.json``: one transcript object ``{"id", "turns": [...]}`` or a list of them;
- ``.jsonl``: one transcript object per line;
- ``.srt`` / ``.vtt``: subtitles whose cue text starts with a speaker tag (``说话人1：...``,
  ``[说话人1] ...``, ``SPEAKER_01: ...``; in VTT also ``<v 说话人1>...``); the id is the
  file's stem; every block must be a cue with a well-formed timing line (a malformed one stops
  the read: its text would otherwise vanish);
- ``.txt``: lines ``说话人1：...``; a line without a tag continues the previous turn.

Speaker tags are regular expressions (``corpus.speaker_tags``, default
:data:`DEFAULT_SPEAKER_TAGS`). A line that starts like a tag (a short name and a colon, or a
bracketed name) that no pattern accepts stops the read naming it, instead of being glued onto
the previous turn.

A turn is ``{"speaker": ..., "text": ...}`` (``start`` optional) or ``[speaker, text]``. Every
problem is reported with file, line and field, and a file with any problem yields nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecode.config.corpus import DEFAULT_SPEAKER_TAGS, tag_pattern

SUFFIXES = (".json", ".jsonl", ".srt", ".vtt", ".txt")
#: What looks like a speaker tag: a bracketed name, or a short name and a colon at the start
#: of a line (an ASCII colon followed by a digit is a time, not a tag).
_NAME = r"[^\s:：，,。？?！!、（）()「」\"'<>]{1,12}(?: [0-9A-Za-z]{1,3})?"
_TAG_LIKE = re.compile(rf"^\s*(?:\[(?P<b>[^\]\s]{{1,12}})\]|(?P<p>{_NAME})\s*(?:：|:(?!\d)))")
_VOICE = re.compile(r"^\s*<v(?:\.[^ >]*)?\s+([^>]+)>(.*?)(?:</v>)?\s*$")
_TIMING = re.compile(
    r"^\s*(\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->\s*(\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{1,3}"
)
_HEADER_BLOCK = re.compile(r"^(?:WEBVTT|NOTE|STYLE|REGION)\b")


_ID = re.compile(r"^[A-Za-z0-9._\-\u4e00-\u9fff]+$")


@dataclass(frozen=True)
class RawTurn:
    speaker: str
    text: str
    line: int


@dataclass(frozen=True)
class RawTranscript:
    id: str
    source: str
    turns: tuple[RawTurn, ...]

    @property
    def speakers(self) -> list[str]:
        return list(dict.fromkeys(t.speaker for t in self.turns))


@dataclass(frozen=True)
class TranscriptProblem:
    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: field {self.field!r}: {self.message}"


class TranscriptError(ValueError):
    """A transcript file has problems; ``problems`` lists every one of them."""

    def __init__(self, problems: Sequence[TranscriptProblem]) -> None:
        self.problems = list(problems)
        shown = "\n".join(f"  {p}" for p in self.problems[:50])
        super().__init__(f"{len(self.problems)} problem(s) in the transcripts:\n{shown}")


class _Reader:
    def __init__(self, path: Path, tags: re.Pattern[str]) -> None:
        self.path = path
        self.tags = tags
        self.problems: list[TranscriptProblem] = []

    def bad(self, line: int, field: str, message: str) -> None:
        self.problems.append(TranscriptProblem(str(self.path), line, field, message))

    # -- JSON shapes ------------------------------------------------------------------------
    def turn(self, line: int, where: str, raw: Any) -> RawTurn | None:
        if isinstance(raw, list | tuple) and len(raw) >= 2:
            speaker, text = raw[0], raw[1]
        elif isinstance(raw, dict):
            speaker, text = raw.get("speaker"), raw.get("text")
        else:
            self.bad(line, where, "a turn must be {speaker, text} or [speaker, text]")
            return None
        if not isinstance(speaker, str | int) or not str(speaker).strip():
            self.bad(line, f"{where}.speaker", "missing or empty")
            return None
        if not isinstance(text, str):
            self.bad(line, f"{where}.text", "missing or not a string")
            return None
        return RawTurn(str(speaker).strip(), text.strip(), line)

    def transcript(self, line: int, raw: Any, where: str = "") -> RawTranscript | None:
        if not isinstance(raw, dict):
            self.bad(line, where or "<json>", "a transcript must be an object {id, turns}")
            return None
        rid = raw.get("id")
        ok = True
        if not isinstance(rid, str | int) or not _ID.match(str(rid)):
            self.bad(line, f"{where}id", f"missing or not a plain identifier: {rid!r}")
            ok = False
        turns_raw = raw.get("turns")
        if not isinstance(turns_raw, list) or not turns_raw:
            self.bad(line, f"{where}turns", "missing or empty list")
            return None
        turns = [self.turn(line, f"{where}turns[{i}]", t) for i, t in enumerate(turns_raw)]
        if not ok or any(t is None for t in turns):
            return None
        return RawTranscript(str(rid), str(self.path), tuple(t for t in turns if t is not None))

    def json_file(self, text: str) -> list[RawTranscript]:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self.bad(exc.lineno, "<json>", f"not valid JSON: {exc.msg}")
            return []
        items = data if isinstance(data, list) else [data]
        out = [
            self.transcript(1, item, f"[{i}]." if isinstance(data, list) else "")
            for i, item in enumerate(items)
        ]
        return [t for t in out if t is not None]

    def jsonl_file(self, text: str) -> list[RawTranscript]:
        out: list[RawTranscript] = []
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                self.bad(lineno, "<json>", f"not valid JSON: {exc.msg}")
                continue
            t = self.transcript(lineno, raw)
            if t is not None:
                out.append(t)
        return out

    # -- tagged text shapes -----------------------------------------------------------------
    def tagged(self, lineno: int, text: str) -> tuple[str, str] | None:
        """(speaker, text) of a tagged line; None for an untagged one (a continuation). A
        tag-like start that no pattern accepts is a problem (and counts as tagged)."""
        voice = _VOICE.match(text)
        if voice:
            return voice.group(1).strip(), voice.group(2).strip()
        m = _TAG_LIKE.match(text)
        if m is None:
            return None
        name = (m.group("b") or m.group("p")).strip()
        rest = text[m.end() :].lstrip(" :：").strip()
        if self.tags.fullmatch(name):
            return name, rest
        self.bad(
            lineno,
            "speaker",
            f"unknown speaker tag {name!r}: add a pattern to corpus.speaker_tags, or rewrite "
            "the line if it continues the previous turn",
        )
        return name, rest

    def subtitle_file(self, text: str) -> list[RawTranscript]:
        turns: list[RawTurn] = []
        lines = [raw.strip().lstrip("\ufeff") for raw in text.split("\n")]
        block: list[tuple[int, str]] = []
        for lineno, line in enumerate([*lines, ""], start=1):
            if line:
                block.append((lineno, line))
            elif block:
                self.cue(block, turns)
                block = []
        return self.single(turns)

    def cue(self, block: list[tuple[int, str]], turns: list[RawTurn]) -> None:
        """One blank-line separated block: a header/NOTE block, or [cue id] timing text..."""
        if _HEADER_BLOCK.match(block[0][1]):
            return
        timing = next((k for k, (_, line) in enumerate(block[:2]) if _TIMING.match(line)), None)
        if timing is None:
            k = 1 if len(block) > 1 and block[0][1].isdigit() else 0
            lineno, line = block[k]
            self.bad(
                lineno,
                "timing",
                f"not a cue timing 'HH:MM:SS,mmm --> HH:MM:SS,mmm': {line[:40]!r} (the cue's "
                "text would be lost)",
            )
            return
        body = block[timing + 1 :]
        if not body:
            return
        cue_first = len(turns)
        for lineno, line in body:
            tagged = self.tagged(lineno, line)
            if tagged is not None:
                turns.append(RawTurn(tagged[0], tagged[1], lineno))
            elif len(turns) > cue_first:
                last = turns[-1]
                turns[-1] = RawTurn(last.speaker, last.text + line, last.line)
            else:
                self.bad(lineno, "speaker", f"cue text without a speaker tag: {line[:30]!r}")

    def plain_file(self, text: str) -> list[RawTranscript]:
        turns: list[RawTurn] = []
        for lineno, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip().lstrip("\ufeff")
            if not line:
                continue
            tagged = self.tagged(lineno, line)
            if tagged is not None:
                turns.append(RawTurn(tagged[0], tagged[1], lineno))
            elif turns:
                last = turns[-1]
                turns[-1] = RawTurn(last.speaker, last.text + line, last.line)
            else:
                self.bad(lineno, "speaker", f"text before the first speaker tag: {line[:30]!r}")
        return self.single(turns)

    def single(self, turns: list[RawTurn]) -> list[RawTranscript]:
        if not turns:
            if not self.problems:  # else those problems say why
                self.bad(1, "turns", "no speaker-tagged text")
            return []
        rid = self.path.stem
        if not _ID.match(rid):
            self.bad(1, "id", f"the file name {rid!r} is not a plain identifier")
            return []
        return [RawTranscript(rid, str(self.path), tuple(turns))]


def read_transcript_file(
    path: str | Path, tags: Sequence[str] = DEFAULT_SPEAKER_TAGS
) -> list[RawTranscript]:
    """The transcripts of one file, or :class:`TranscriptError` naming every problem."""
    path = Path(path)
    reader = _Reader(path, tag_pattern(tags))
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise TranscriptError(
            [TranscriptProblem(str(path), 0, "<file>", f"unsupported suffix; use {SUFFIXES}")]
        )
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            [TranscriptProblem(str(path), 0, "<encoding>", f"not UTF-8: {exc}")]
        ) from None
    if suffix == ".json":
        out = reader.json_file(text)
    elif suffix == ".jsonl":
        out = reader.jsonl_file(text)
    elif suffix in (".srt", ".vtt"):
        out = reader.subtitle_file(text)
    else:
        out = reader.plain_file(text)
    for t in out:
        if not any(turn.text for turn in t.turns):
            reader.bad(1, f"{t.id}.turns", "every turn is empty")
    if reader.problems:
        raise TranscriptError(reader.problems)
    return out


def transcript_files(directory: str | Path) -> list[Path]:
    """The transcript files of a directory (not recursive), sorted by name."""
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"transcript directory not found: {d}")
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)


def read_transcripts(
    paths: Iterable[str | Path], tags: Sequence[str] = DEFAULT_SPEAKER_TAGS
) -> list[RawTranscript]:
    """Every transcript of ``paths``; every problem of every file in one error; ids unique."""
    out: list[RawTranscript] = []
    problems: list[TranscriptProblem] = []
    seen: dict[str, str] = {}
    for p in paths:
        try:
            found = read_transcript_file(p, tags)
        except TranscriptError as exc:
            problems.extend(exc.problems)
            continue
        for t in found:
            if t.id in seen:
                problems.append(
                    TranscriptProblem(
                        str(p), t.turns[0].line, "id", f"{t.id!r} repeats {seen[t.id]}"
                    )
                )
            seen.setdefault(t.id, str(p))
            out.append(t)
    if problems:
        raise TranscriptError(problems)
    return out


def transcript_ids(path: str | Path) -> list[tuple[str, int]]:
    """(id, line) of each transcript of a file, read cheaply for planning: the file stem for
    subtitles and plain text, the ``id`` of each object for JSON and JSONL (a file that does
    not parse yields nothing here; its reader names the problem)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".json", ".jsonl"):
        return [(p.stem, 1)]
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    out: list[tuple[str, int]] = []
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return []
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict) and isinstance(item.get("id"), str | int):
                out.append((str(item["id"]), 1))
        return out
    for lineno, line in enumerate(text.split("\n"), start=1):
        try:
            item = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and isinstance(item.get("id"), str | int):
            out.append((str(item["id"]), lineno))
    return out


def duplicate_ids(files: Iterable[str | Path]) -> list[TranscriptProblem]:
    """Every transcript id that two files (or two records of one file) share."""
    seen: dict[str, str] = {}
    problems: list[TranscriptProblem] = []
    for f in files:
        for tid, line in transcript_ids(f):
            if tid in seen:
                problems.append(
                    TranscriptProblem(str(f), line, "id", f"{tid!r} repeats {seen[tid]}")
                )
            else:
                seen[tid] = f"{f}:{line}"
    return problems
