"""The dataset target on a fresh copy of the project: built offline from the shipped
transcripts and reviews, accepted by `lecode validate`, evaluated by all_tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_project

BIN = Path(sys.executable).parent
FAST = """
metrics: {bertscore: {enabled: false}}
report: {bootstrap: {resamples: 200}}
reliability: {enabled: false}
"""


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "snakemake"), *args], cwd=project, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow
def test_dataset_target_builds_a_valid_dataset_that_all_tables_evaluates(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    (project / "configs").mkdir()
    for name in ("dataset-review.yaml", "built-dataset.yaml"):
        src = Path(__file__).resolve().parent.parent / "configs" / name
        (project / "configs" / name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    (project / "fast.yaml").write_text(FAST, encoding="utf-8")
    review = ("--configfile", "configs/dataset-review.yaml")
    built = run(project, "dataset", "--cores", "2", *review)
    assert built.returncode == 0, built.stderr[-4000:]
    files = [project / "data" / "built" / f"LeCoDe_{s}set.jsonl" for s in ("train", "test")]
    check = subprocess.run(
        [str(BIN / "lecode"), "validate", *map(str, files)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    split = json.loads((project / "data" / "built" / "split.json").read_text(encoding="utf-8"))
    assert (split["n_train"], split["n_test"], split["seed"]) == (5, 1, 0)  # 8:2
    assert split["reviewed"]["stage2"] == ["tr-fraud-006", "tr-labour-001"]
    # a rebuild has nothing to do
    again = run(project, "dataset", "--cores", "2", "-n", *review)
    assert "Nothing to be done" in again.stdout + again.stderr
    tables = run(
        project,
        "all_tables",
        "--cores",
        "2",
        "--configfile",
        "configs/dataset-review.yaml",
        "configs/built-dataset.yaml",
        "fast.yaml",
    )
    assert tables.returncode == 0, tables.stderr[-4000:]
    out = project / "reports" / "tables"
    assert "| # Dialogue Samples | 6 | 5 | 1 |" in (out / "table2.md").read_text(encoding="utf-8")
    assert "retrieval" in (out / "table3.md").read_text(encoding="utf-8")
    agreement = (out / "annotation_agreement.md").read_text(encoding="utf-8")
    assert "ann_a vs ann_b" in agreement and "| 88.0 |" in agreement
