"""Per-dialogue score files: CSV, one row per dialogue, columns from the score record.

Column types follow the metric declarations (``value_type``). Written atomically through
:func:`lecode.recordio.atomic_write_text`. polars is imported by the functions that need it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lecode.metrics.registry import METRICS
from lecode.recordio import RecordError, atomic_write_text
from lecode.score_records import IDENTITY, ScoreRecord

if TYPE_CHECKING:
    import polars as pl


def score_schema() -> dict[str, type[pl.DataType]]:
    """The column types of a score file (``SCORE_SCHEMA``): identity columns, then one per
    declared metric in registry order."""
    import polars as pl

    def dtype(t: type) -> type[pl.DataType]:
        return pl.Utf8 if t is str else pl.Int64 if t is int else pl.Float64

    schema = {name: dtype(t) for name, t in IDENTITY.items()}
    schema.update({m.key: dtype(m.value_type) for m in METRICS})
    return schema


def __getattr__(name: str) -> Any:
    """``SCORE_SCHEMA``, built (and polars imported) on first use."""
    if name == "SCORE_SCHEMA":
        schema = score_schema()
        globals()["SCORE_SCHEMA"] = schema
        return schema
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scores_frame(rows: Iterable[ScoreRecord]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame([r.model_dump() for r in rows], schema=score_schema(), orient="row")


def write_scores(path: str | Path, rows: Iterable[ScoreRecord]) -> None:
    """Per-dialogue scores as CSV, one row per dialogue, sorted by case id."""
    frame = scores_frame(rows).sort("case_id")
    atomic_write_text(path, frame.write_csv(float_precision=6))


def read_scores(path: str | Path) -> pl.DataFrame:
    """A score file; its header must hold exactly the current score columns, in order."""
    import polars as pl

    schema = score_schema()
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\r\n").split(",")
    if header != list(schema):
        extra = [c for c in header if c not in schema]
        absent = [c for c in schema if c not in header]
        raise RecordError(
            f"{path}: score columns differ from the declared metrics (unknown {extra}, absent "
            f"{absent}, or another order); rerun scoring to rewrite it"
        )
    return pl.read_csv(path, schema=schema)
