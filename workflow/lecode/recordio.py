"""The one place where pipeline records are read from and written to disk.

JSONL for nested records (cases in shards, transcripts, matches, judgements); the per-dialogue
score files are read and written by :mod:`lecode.score_io`, which simulation does not import.
Every write is atomic (temporary file, fsync, rename), so a crashed job never leaves a
half-written output behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from lecode.records import Case, Judgement, Matches, Transcript

R = TypeVar("R", bound=BaseModel)


class RecordError(ValueError):
    """A record on disk does not parse; names the file and line."""


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (same-directory temp file, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; outputs are ordinary readable files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(record: BaseModel) -> str:
    """Canonical one-line JSON of a record (stable key order, UTF-8 kept)."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def _write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> None:
    atomic_write_text(path, "".join(dumps(r) + "\n" for r in records))


def _read_jsonl(path: str | Path, model: type[R]) -> Iterator[R]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValidationError as exc:
                raise RecordError(f"{path}:{lineno}: not a valid {model.__name__}: {exc}") from exc


def write_cases(path: str | Path, cases: Iterable[Case]) -> None:
    _write_jsonl(path, cases)


def read_cases(path: str | Path) -> list[Case]:
    return list(_read_jsonl(path, Case))


def write_transcripts(path: str | Path, transcripts: Iterable[Transcript]) -> None:
    _write_jsonl(path, transcripts)


def read_transcripts(path: str | Path) -> list[Transcript]:
    return list(_read_jsonl(path, Transcript))


def write_matches(path: str | Path, matches: Iterable[Matches]) -> None:
    _write_jsonl(path, matches)


def read_matches(path: str | Path) -> list[Matches]:
    return list(_read_jsonl(path, Matches))


def write_judgements(path: str | Path, judgements: Iterable[Judgement]) -> None:
    _write_jsonl(path, judgements)


def read_judgements(path: str | Path) -> list[Judgement]:
    return list(_read_jsonl(path, Judgement))
