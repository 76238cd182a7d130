"""Assignments: every dialogue gets its reviewers per stage, a seeded share gets two, a
dialogue keeps its annotators when transcripts are added; progress per annotator and stage."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest
import yaml

from lecode.config.corpus import CorpusAssign
from lecode.corpus.assign import assign, progress

REPO = Path(__file__).resolve().parent.parent
TEAM = CorpusAssign(stage1=("a", "b", "c", "d"), stage2=("x", "y"), overlap=0.25, seed=3)


def test_every_dialogue_gets_one_or_two_reviewers_per_stage() -> None:
    ids = [f"d{k:04d}" for k in range(2000)]
    rows = assign(ids, TEAM)
    per = Counter((r.id, r.stage) for r in rows)
    assert set(per) == {(i, s) for i in ids for s in ("stage1", "stage2")}
    doubled = [k for k, n in per.items() if n == 2]
    assert set(per.values()) == {1, 2}
    # a seeded share of about 25% (binomial sd ~ 0.7% per stage): between 22% and 28%
    assert 0.22 < len(doubled) / len(per) < 0.28
    assert all(r.overlap == (per[r.id, r.stage] == 2) for r in rows)
    load = Counter(r.annotator for r in rows if r.stage == "stage1")
    assert set(load) == {"a", "b", "c", "d"}
    assert max(load.values()) / min(load.values()) < 1.2  # even loads
    assert not any(
        per2 > 1 for per2 in Counter((r.id, r.stage, r.annotator) for r in rows).values()
    )


def test_assignments_are_stable_when_transcripts_are_added() -> None:
    before = assign([f"d{k}" for k in range(300)], TEAM)
    after = assign([f"d{k}" for k in range(600)], TEAM)
    old = {(r.id, r.stage, r.annotator) for r in before}
    assert old <= {(r.id, r.stage, r.annotator) for r in after}
    again = assign([f"d{k}" for k in reversed(range(300))], TEAM)
    assert before == again
    other_seed = assign([f"d{k}" for k in range(300)], TEAM.model_copy(update={"seed": 4}))
    assert other_seed != before


def test_progress_counts_reviewed_and_pending(tmp_path: Path) -> None:
    rows = assign(["d1", "d2", "d3"], CorpusAssign(stage1=("a",), stage2=("a",), overlap=0))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "d1.stage1.csv").write_text("x", encoding="utf-8")
    (tmp_path / "a" / "d9.stage1.csv").write_text("x", encoding="utf-8")
    got = {(p.annotator, p.stage): p for p in progress(rows, tmp_path)}
    p1, p2 = got["a", "stage1"], got["a", "stage2"]
    assert (p1.assigned, p1.reviewed, p1.pending, p1.unassigned_reviewed) == (3, 1, 2, 1)
    assert (p2.assigned, p2.reviewed, p2.pending) == (3, 0, 3)


def test_the_assign_command_writes_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lecode.cli import main

    extra = tmp_path / "team.yaml"
    extra.write_text(
        yaml.safe_dump(
            {
                "corpus": {
                    "transcripts": str(REPO / "data" / "transcripts"),
                    "review_dir": str(REPO / "data" / "review"),
                    "assign": {"stage1": ["ann_a", "ann_b"], "stage2": ["ann_a"], "overlap": 0.5},
                }
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["corpus", "assign", "--params", str(REPO / "params.yaml"), "--params", str(extra)]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| ann_a | stage2 | 6 | 2 | 4 | 0 |" in printed  # both shipped reviews count
    rows = list(csv.DictReader((out / "assignments.csv").open(encoding="utf-8-sig")))
    assert {r["id"] for r in rows} == {
        "tr-labour-001",
        "tr-loan-002",
        "tr-divorce-003",
        "tr-traffic-004",
        "tr-rental-005",
        "tr-fraud-006",
    }
    assert (out / "progress.csv").read_bytes().startswith(b"\xef\xbb\xbf")
