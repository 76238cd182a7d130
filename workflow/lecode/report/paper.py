"""The paper's published numbers (``data/paper_numbers.csv``) and matching systems to them."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from lecode.report.spec import FEW_SHOT, ReportedSystem

DEFAULT_PAPER_NUMBERS = Path("data/paper_numbers.csv")
COLUMNS = ("table", "group", "label", "setting", "metric", "value")


def normalise_label(label: str) -> str:
    """Case- and space-insensitive form used to match our labels to the paper's."""
    return " ".join(label.casefold().split())


@dataclass(frozen=True)
class PaperNumbers:
    """Published values: ``values[(table, normalised label, setting)][metric]`` (display scale)."""

    values: dict[tuple[str, str, str], dict[str, float]]
    labels: dict[str, str]
    source: str

    def lookup(self, label: str, setting: str) -> dict[str, float] | None:
        """Table 3 for zero-shot rows (Tables 6/7 as fallback), Tables 6/7 for few-shot rows."""
        norm = normalise_label(label)
        tables = ("3", "6", "7") if setting == "ZS" else ("6", "7")
        merged: dict[str, float] = {}
        for t in reversed(tables):
            merged.update(self.values.get((t, norm, setting), {}))
        return merged or None

    def table2(self) -> dict[str, dict[str, float]]:
        """Table 2 as ``{column label: {statistic: value}}``."""
        return {
            self.labels.get(norm, norm): vals
            for (t, norm, _), vals in self.values.items()
            if t == "2"
        }


def load_paper_numbers(path: str | Path = DEFAULT_PAPER_NUMBERS) -> PaperNumbers:
    """Read the CSV; ``#`` lines before the header are the source note."""
    text = Path(path).read_text(encoding="utf-8").splitlines()
    comments = [line[1:].strip() for line in text if line.startswith("#")]
    body = [line for line in text if line and not line.startswith("#")]
    reader = csv.DictReader(body)
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{path}: expected columns {COLUMNS}, found {reader.fieldnames}")
    values: dict[tuple[str, str, str], dict[str, float]] = {}
    labels: dict[str, str] = {}
    for row in reader:
        norm = normalise_label(row["label"])
        labels.setdefault(norm, row["label"])
        key = (row["table"], norm, row["setting"])
        values.setdefault(key, {})[row["metric"]] = float(row["value"])
    source = comments[0] if comments else str(path)
    if source.casefold().startswith("source:"):
        source = source[len("source:") :].strip()
    return PaperNumbers(values=values, labels=labels, source=source)


def paper_setting(system: ReportedSystem, *, few_shot: str = FEW_SHOT) -> str:
    """The paper's setting column for a system: FS for few-shot, otherwise ZS."""
    return "FS" if system.strategy == few_shot else "ZS"


def paper_label(system: ReportedSystem) -> str:
    return system.paper_label or system.label
