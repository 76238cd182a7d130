"""The one place where pipeline records are read from and written to disk.

JSONL for nested records (cases in shards, transcripts, matches, judgements) and CSV for the
flat per-dialogue scores. Every write is atomic (temporary file, fsync, rename), so a crashed
job never leaves a half-written output behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from lecode.records import Case, DialogueScores, Judgement, Matches, Transcript

if TYPE_CHECKING:
    import polars as pl

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


# polars is imported by the functions that need it (the score files), not by this module: every
# job reads or writes records through it, and most never touch a data frame
# (benchmarks/import_cost.py).


def score_schema() -> dict[str, type[pl.DataType]]:
    """The column types of a score file (``SCORE_SCHEMA``)."""
    import polars as pl

    return {
        name: (
            pl.Utf8
            if name in ("case_id", "expert", "strategy", "stop_reason")
            else pl.Int64
            if name in ("n_facts", "turns", "bertscore_truncated")
            else pl.Float64
        )
        for name in DialogueScores.model_fields
    }


def __getattr__(name: str) -> Any:
    """``SCORE_SCHEMA``, built (and polars imported) on first use."""
    if name == "SCORE_SCHEMA":
        schema = score_schema()
        globals()["SCORE_SCHEMA"] = schema
        return schema
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scores_frame(rows: Iterable[DialogueScores]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame([r.model_dump() for r in rows], schema=score_schema(), orient="row")


def write_scores(path: str | Path, rows: Iterable[DialogueScores]) -> None:
    """Per-dialogue scores as CSV, one row per dialogue, sorted by case id."""
    frame = scores_frame(rows).sort("case_id")
    atomic_write_text(path, frame.write_csv(float_precision=6))


def read_scores(path: str | Path) -> pl.DataFrame:
    import polars as pl

    return pl.read_csv(path, schema=score_schema())
