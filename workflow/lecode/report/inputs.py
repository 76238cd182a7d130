"""What the report steps read, loaded once from the paths their spec names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from lecode.config.roles import System
from lecode.dataset import load_cases
from lecode.recordio import read_judgements, read_matches, read_transcripts
from lecode.records import Judgement, Matches, Transcript
from lecode.report.specs import ReportSpec
from lecode.score_io import read_scores


class ReportInputs:
    """The aggregate scores, the dataset, the shard index and every system's records, the
    records kept per file (provenance names each file with its number of records)."""

    def __init__(self, spec: ReportSpec) -> None:
        self.spec = spec
        # Columns this run does not compute are dropped: their cells show "—", while a
        # computed column without any value (every dialogue failed) shows 0/N.
        self.scores = read_scores(spec.aggregate).drop(spec.not_applicable, strict=False)
        self.train = load_cases(spec.train.path)
        self.test = load_cases(spec.test.path)
        self.index: dict[str, Any] = json.loads(Path(spec.index).read_text(encoding="utf-8"))
        self.n_expected = int(self.index["n_cases"])
        self.test_ids = set(self.index["case_ids"])
        self.transcript_files: dict[str, list[Transcript]] = {
            p: read_transcripts(p) for x in spec.systems for p in x.transcripts
        }
        self.match_files: dict[str, list[Matches]] = {
            p: read_matches(p) for x in spec.systems for p in x.matches
        }
        self.judgement_files: dict[str, list[Judgement]] = {
            p: read_judgements(p) for x in spec.systems for p in x.judgements
        }

    @property
    def transcripts(self) -> list[Transcript]:
        return [t for records in self.transcript_files.values() for t in records]

    @property
    def matches(self) -> list[Matches]:
        return [m for records in self.match_files.values() for m in records]

    @property
    def judgements(self) -> list[Judgement]:
        return [j for records in self.judgement_files.values() for j in records]

    @property
    def systems(self) -> list[System]:
        return [x.system for x in self.spec.systems]

    def system_dicts(self) -> list[dict[str, str]]:
        return [x.system.model_dump() for x in self.spec.systems]

    def usage(self) -> pl.DataFrame:
        from lecode.report.usage import usage_frame

        return usage_frame(self.transcripts, self.matches, self.judgements)
