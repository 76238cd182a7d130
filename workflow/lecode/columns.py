"""A reported column: what a table or figure shows of one per-dialogue (or per-answer) value.

Metric declarations (:mod:`lecode.metrics.declaration`) are columns; the client audit and
Table 4 build plain ones for the shares they report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower"]
Section = Literal["effectiveness", "efficiency", "auto", "llm"]


@dataclass(frozen=True)
class Metric:
    """One reported column: score column, header, display scale and ranking direction.

    ``direction=None`` disables ranking; ``section`` groups columns under a LaTeX header.
    """

    key: str
    header: str
    scale: float
    direction: Direction | None
    section: Section

    @property
    def display_header(self) -> str:
        return self.header + ("↓" if self.direction == "lower" else "")
