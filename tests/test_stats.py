"""Bootstrap intervals, paired bootstrap and Holm's correction."""

from __future__ import annotations

import numpy as np
import pytest

from lecode.stats import Estimate, ResamplePlan, bootstrap_mean, holm, paired_bootstrap


def test_golden_bootstrap_bernoulli() -> None:
    # 120 successes in 400 cases: p = 0.3, normal-approximation 95% CI 0.3 +/- 0.0449.
    values = np.array([1.0] * 120 + [0.0] * 280)
    est = bootstrap_mean(values, resamples=10_000, seed=0)
    assert est == Estimate(mean=0.3, ci_low=0.255, ci_high=0.345, n=400)
    se = np.sqrt(0.3 * 0.7 / 400)
    assert est.ci_low == pytest.approx(0.3 - 1.96 * se, abs=0.002)
    assert est.ci_high == pytest.approx(0.3 + 1.96 * se, abs=0.002)


def test_golden_bootstrap_uniform_grid() -> None:
    values = np.linspace(0.0, 1.0, 101)
    est = bootstrap_mean(values, resamples=10_000, seed=7)
    assert est.n == 101
    assert est.mean == pytest.approx(0.5)
    assert est.ci_low == pytest.approx(0.44386138613861376, abs=1e-12)
    assert est.ci_high == pytest.approx(0.5575247524752472, abs=1e-12)
    # sd of the grid / sqrt(n) ~ 0.0290: the interval is about +/- 1.96 of it
    half = (est.ci_high - est.ci_low) / 2
    assert half == pytest.approx(1.96 * values.std() / np.sqrt(101), rel=0.03)


def test_default_resamples_and_seed_are_reproducible() -> None:
    values = np.random.default_rng(3).random(50)
    a = bootstrap_mean(values)
    b = bootstrap_mean(values)
    c = bootstrap_mean(values, seed=1)
    assert ResamplePlan().resamples >= 10_000
    assert a == b
    assert a.mean == c.mean and (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)


def test_missing_values_use_only_present_cases() -> None:
    values: list[float | None] = [0.2, None, 0.4, float("nan"), 0.9, 0.1]
    est = bootstrap_mean(values, resamples=2000, seed=0)
    present = bootstrap_mean([0.2, 0.4, 0.9, 0.1], resamples=2000, seed=0)
    assert est == present
    assert est.n == 4
    assert est.mean == pytest.approx(0.4)


def test_all_missing_and_degenerate() -> None:
    assert bootstrap_mean([None, None]) == Estimate(None, None, None, 0)
    assert bootstrap_mean([]) == Estimate(None, None, None, 0)
    assert bootstrap_mean([0.7]) == Estimate(0.7, 0.7, 0.7, 1)
    assert bootstrap_mean([0.5, 0.5, 0.5]) == Estimate(0.5, 0.5, 0.5, 3)


def test_plan_does_not_depend_on_request_order() -> None:
    first = ResamplePlan(resamples=500, seed=4)
    big_first = first.indices(300).copy()
    small_after = first.indices(7).copy()
    second = ResamplePlan(resamples=500, seed=4)
    small_first = second.indices(7).copy()
    assert np.array_equal(small_after, small_first)
    assert np.array_equal(second.indices(300), big_first)
    assert small_first.min() >= 0 and small_first.max() <= 6


def test_one_index_matrix_reused_across_metrics_of_a_row() -> None:
    plan = ResamplePlan(resamples=300, seed=0)
    matrix = np.random.default_rng(0).random((40, 3))
    matrix[5, 2] = np.nan
    ests = plan.means(matrix)
    assert [e.n for e in ests] == [40, 40, 39]
    idx = plan.indices(40)
    assert plan.indices(40) is idx  # cached, shared by the two complete columns
    expected = matrix[:, 1][idx].mean(axis=1)
    lo, hi = np.quantile(expected, [0.025, 0.975])
    assert (ests[1].ci_low, ests[1].ci_high) == (pytest.approx(lo), pytest.approx(hi))


def test_estimate_scaled() -> None:
    assert Estimate(0.5, 0.4, 0.6, 9).scaled(100) == Estimate(50.0, 40.0, 60.0, 9)


def test_paired_bootstrap_detects_a_shift() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(0.5, 0.1, 200)
    b = a - 0.02 + rng.normal(0.0, 0.05, 200)
    res = paired_bootstrap(a, b, resamples=10_000, seed=0)
    assert res.n == 200
    assert res.diff.mean == pytest.approx(float(np.mean(a - b)))
    assert res.diff.ci_low is not None and res.diff.ci_low > 0
    assert res.p_value == pytest.approx(1 / 10_001)


def test_paired_bootstrap_no_difference() -> None:
    rng = np.random.default_rng(2)
    a = rng.random(100)
    noisy = paired_bootstrap(a, a + rng.normal(0, 0.05, 100), resamples=5000)
    assert noisy.p_value is not None and noisy.p_value > 0.05
    same = paired_bootstrap(a, a)
    assert same.p_value == 1.0 and same.diff.mean == 0.0


def test_paired_bootstrap_common_cases_only() -> None:
    a = [0.5, None, 0.7, 0.9]
    b = [0.4, 0.3, None, 0.6]
    res = paired_bootstrap(a, b, resamples=1000)
    assert res.n == 2
    assert res.diff.mean == pytest.approx(0.2)
    assert paired_bootstrap([None], [0.1]).p_value is None
    with pytest.raises(ValueError):
        paired_bootstrap([0.1, 0.2], [0.1])


def test_paired_constant_difference() -> None:
    res = paired_bootstrap([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], resamples=99)
    assert res.diff.mean == pytest.approx(0.1)
    assert res.p_value == pytest.approx(1 / 100)
    assert paired_bootstrap([0.5], [0.1]).p_value == 1.0


def test_holm_hand_example() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_and_skips_missing() -> None:
    assert holm([0.5, None, 0.4]) == [pytest.approx(0.8), None, pytest.approx(0.8)]
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([1.5])


def test_plan_validates_arguments() -> None:
    with pytest.raises(ValueError):
        ResamplePlan(resamples=0)
    with pytest.raises(ValueError):
        ResamplePlan(confidence=1.0)
    with pytest.raises(ValueError):
        ResamplePlan().indices(0)
