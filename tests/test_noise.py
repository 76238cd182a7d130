"""Variance decomposition and minimum detectable difference, against numbers worked out by
hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lecode.noise import (
    Components,
    decompose,
    min_detectable_difference,
    pool,
    within_variance,
    z_sum,
)

NAN = float("nan")


def test_within_variance_by_hand() -> None:
    # case 1: runs 1, 3 -> var 2; case 2: runs 2, 2, 5 -> mean 3, var (1+1+4)/2 = 3;
    # case 3: one value only -> left out. Mean of 2 and 3: 2.5
    runs = np.array([[1.0, 3.0, NAN], [2.0, 2.0, 5.0], [4.0, NAN, NAN]])
    assert within_variance(runs) == pytest.approx(2.5)
    assert within_variance(np.array([[1.0, NAN]])) is None


def test_decomposition_of_a_judge_metric_by_hand() -> None:
    # base over 4 cases: 2, 4, 6, 8 -> var (ddof 1) = (9+1+1+9)/3 = 20/3
    base = np.array([2.0, 4.0, 6.0, 8.0])
    runs = {
        # expert runs: per-case variances 2, 2, 0, 0 -> v_expert = 1.0
        "expert": np.array([[2.0, 4.0], [4.0, 6.0], [6.0, 6.0], [8.0, 8.0]]),
        # client runs: per-case variances 0.5, 0.5, 0.5, 0.5 -> v_client = 0.5
        "client": np.array([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]),
        # judge runs (same transcripts): variances 0.5, 0, 0, 0 -> v_judge = 0.125
        "judge": np.array([[2.0, 3.0], [4.0, 4.0], [6.0, 6.0], [8.0, 8.0]]),
    }
    c = decompose(base, runs, judge_metric=True)
    assert c.judge == pytest.approx(0.125)
    assert c.expert == pytest.approx(1.0 - 0.125)
    assert c.client == pytest.approx(0.5 - 0.125)
    # cases: 20/3 - (0.875 + 0.375 + 0.125) = 20/3 - 1.375
    assert c.cases == pytest.approx(20 / 3 - 1.375)
    assert c.total == pytest.approx(20 / 3)
    assert c.n_cases == 4


def test_the_judge_does_not_touch_other_metrics() -> None:
    base = np.array([0.0, 1.0])
    runs = {
        "expert": np.array([[0.0, 1.0], [1.0, 1.0]]),
        "judge": np.array([[0.0, 5.0], [1.0, 1.0]]),
    }
    c = decompose(base, runs, judge_metric=False)
    # structurally zero judge noise: the expert keeps all of v_expert = (0.5 + 0)/2
    assert c.judge == 0.0 and c.expert == pytest.approx(0.25)
    assert c.client is None  # not varied
    # cases: var(0, 1) = 0.5 minus 0.25
    assert c.cases == pytest.approx(0.25)


def test_unvaried_judge_leaves_its_noise_in_the_others() -> None:
    c = decompose(
        np.array([1.0, 3.0]), {"expert": np.array([[1.0, 2.0], [3.0, 3.0]])}, judge_metric=True
    )
    assert c.judge is None and c.expert == pytest.approx(0.25)
    # components are never negative: the cases share is clamped at 0
    tiny = decompose(
        np.array([1.0, 1.1]), {"expert": np.array([[1.0, 9.0], [1.1, 1.1]])}, judge_metric=False
    )
    assert tiny.cases == 0.0


def test_pool_and_mdd_by_hand() -> None:
    a = Components(cases=2.0, expert=1.0, client=None, judge=0.0, n_cases=4)
    b = Components(cases=4.0, expert=3.0, client=1.0, judge=0.0, n_cases=5)
    p = pool([a, b])
    assert (p.cases, p.expert, p.client, p.judge, p.n_cases) == (3.0, 2.0, 1.0, 0.0, 5)
    assert p.total == 6.0
    # z(0.975) + z(0.8) = 1.959964 + 0.841621
    assert z_sum() == pytest.approx(2.801585, abs=1e-6)
    # total 6, N 740: 2.801585 * sqrt(12 / 740)
    assert min_detectable_difference(6.0, 740) == pytest.approx(2.801585 * math.sqrt(12 / 740))


# --------------------------------------------------------------------------- the noise job


def _scores(path, values: dict[str, float | None]) -> None:  # type: ignore[no-untyped-def]
    from lecode.score_io import write_scores
    from lecode.score_records import DialogueScores

    path.mkdir(parents=True, exist_ok=True)
    write_scores(
        path / "scores.csv",
        [
            DialogueScores(
                case_id=c,
                expert="e",
                strategy="zero_shot",
                n_facts=4,
                stop_reason="advice",
                turns=3,
                recall=v,
                overall=None if v is None else 10 * v,
            )
            for c, v in values.items()
        ],
    )


def test_noise_job_by_hand(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from lecode.noise.specs import NoiseSpec, ReplicateRun
    from lecode.noise.steps.noise import run
    from lecode.specs import FileRef

    # base recall over cases a, b: 0.2, 0.6 (var 0.08); expert run: 0.4, 0.6 (per-case
    # variances 0.02, 0 -> v_expert 0.01); judge run: identical (judge noise 0 for recall)
    runs = {
        ("base", 0): {"a": 0.2, "b": 0.6},
        ("expert", 1): {"a": 0.4, "b": 0.6},
        ("judge", 1): {"a": 0.2, "b": 0.6},
    }
    refs = []
    for (factor, k), values in runs.items():
        d = tmp_path / f"{factor}{k}"
        _scores(d, values)
        refs.append(
            ReplicateRun(
                expert="e", strategy="zero_shot", factor=factor, index=k, digest="d", dir=str(d)
            )
        )
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"n_cases": 8}))
    test = tmp_path / "test.jsonl"
    test.write_text("")
    spec = NoiseSpec(
        runs=tuple(refs),
        index=str(index),
        test=FileRef.of(test),
        vary=("expert", "judge"),
        alpha=0.05,
        power=0.8,
        not_applicable=("rouge_l", "bertscore_f1"),
        code="t",
    )
    noise = run(spec, out_dir=str(tmp_path / "out"))
    recall = noise["metrics"]["recall"]
    assert recall["expert"] == pytest.approx(0.01) and recall["judge"] == 0.0
    assert recall["client"] is None  # not varied
    assert recall["cases"] == pytest.approx(0.08 - 0.01)
    # MDD on the x100 scale: 2.801585 * sqrt(2 * 0.08 / 8) * 100
    assert recall["mdd"] == pytest.approx(2.801585 * math.sqrt(0.02) * 100, rel=1e-6)
    # overall = 10 x recall: the expert's variance scales by 100; judge noise measured (0)
    assert noise["metrics"]["overall"]["expert"] == pytest.approx(1.0)
    md = (tmp_path / "out" / "noise.md").read_text(encoding="utf-8")
    assert md.splitlines()[2].startswith("| Metric | SD cases")


def test_adjacent_rows_against_the_mdd() -> None:
    from lecode.metrics.registry import get
    from lecode.report.model import Cell, Row, Table
    from lecode.report.noise import adjacent_table

    metrics = (get("recall"), get("turns"))
    rows = tuple(
        Row(
            label=name,
            cells=(Cell(value=r, n=10, N=10), Cell(value=t, n=10, N=10)),
            systems=(f"{name}/x",),
        )
        for name, r, t in (("A", 40.0, 5.0), ("B", 43.0, 5.2), ("C", 50.0, 7.0))
    )
    table3 = Table(name="table3", title="t", metrics=metrics, rows=rows)
    noise = {"metrics": {"recall": {"mdd": 5.0}, "turns": {"mdd": 1.0}}}
    adj = adjacent_table(table3, noise)
    assert [r.label for r in adj.rows] == ["B − A", "C − B"]
    b_a, c_b = adj.rows
    assert b_a.cells[0].value == pytest.approx(3.0) and b_a.cells[0].distinguishable is False
    assert c_b.cells[0].value == pytest.approx(7.0) and c_b.cells[0].distinguishable is True
    assert c_b.cells[1].value == pytest.approx(1.8) and c_b.cells[1].distinguishable is True
    assert b_a.delta_of == ("B/x", "A/x")
    assert {c.aggregation for r in adj.rows for c in r.cells} == {"cell_difference"}
    # without an MDD for a column nothing is claimed
    assert adjacent_table(table3, {"metrics": {}}).rows[0].cells[0].distinguishable is None
