"""What the report steps read, loaded once from the paths their spec names."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from lecode.dataset import load_cases
from lecode.recordio import read_judgements, read_matches, read_scores, read_transcripts
from lecode.settings import System
from lecode.specs import ReportSpec


class ReportInputs:
    def __init__(self, spec: ReportSpec) -> None:
        self.spec = spec
        self.scores = read_scores(spec.aggregate)
        self.train = load_cases(spec.train.path)
        self.test = load_cases(spec.test.path)
        index = json.loads(Path(spec.index).read_text(encoding="utf-8"))
        self.n_expected = int(index["n_cases"])
        self.test_ids = set(index["case_ids"])
        self.transcripts = [t for x in spec.systems for p in x.transcripts for t in read_transcripts(p)]
        self.matches = [m for x in spec.systems for p in x.matches for m in read_matches(p)]
        self.judgements = [j for x in spec.systems for p in x.judgements for j in read_judgements(p)]

    @property
    def systems(self) -> list[System]:
        return [x.system for x in self.spec.systems]

    def system_dicts(self) -> list[dict[str, str]]:
        return [x.system.model_dump() for x in self.spec.systems]

    def usage(self) -> pl.DataFrame:
        from lecode.report.usage import usage_frame

        return usage_frame(self.transcripts, self.matches, self.judgements)
