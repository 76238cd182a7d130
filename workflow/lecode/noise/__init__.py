"""Measured noise: variance components of each metric and the minimum detectable difference.

Design (``replicates:``): on a fixed subset of test cases each system runs once as configured
(the *base* run, replicate 0) and then ``n - 1`` more times for each varied factor, one
factor at a time: new expert seeds (``expert``: the expert's seed + r, client and judge as in
the base run), new client seeds (``client``), or the base transcripts judged again with new
judge seeds (``judge``). With ``y = case effect + expert noise + client noise + judge noise``
(independent, additive), per metric and system:

* ``v_f``: the variance across the runs of factor ``f`` (base run included, ``ddof=1``),
  averaged over the cases with at least two values;
* judge: ``s2_judge = v_judge`` for the judge's scores, and exactly 0 for every other metric
  (the judge does not touch them);
* expert: ``s2_expert = max(0, v_expert - s2_judge)`` (a new transcript is also judged anew);
  client likewise;
* cases: ``s2_cases = max(0, var(base values across cases) - s2_expert - s2_client -
  s2_judge)``.

A factor that is not varied has no component (``None``): its noise stays inside the others.
Components are pooled over the replicated systems by their mean.

Minimum detectable difference (two-sided test at ``alpha``, power ``power``) of two systems'
means over the configured test set of ``N`` cases, each mean carrying all components once:
``MDD = (z(1 - alpha/2) + z(power)) * sqrt(2 * total / N)``, total = the sum of the
components. It is conservative for paired comparisons (the case effect is partly shared).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

FACTORS: tuple[str, ...] = ("expert", "client", "judge")
COMPONENTS: tuple[str, ...] = ("cases", *FACTORS)


@dataclass(frozen=True)
class Components:
    """Variance components of one metric (raw metric scale, squared); None: not measured."""

    cases: float | None
    expert: float | None
    client: float | None
    judge: float | None
    n_cases: int

    @property
    def total(self) -> float | None:
        parts = [getattr(self, c) for c in COMPONENTS]
        if self.cases is None:
            return None
        return float(sum(p for p in parts if p is not None))

    def as_dict(self) -> dict[str, Any]:
        return {
            **{c: getattr(self, c) for c in COMPONENTS},
            "total": self.total,
            "n_cases": self.n_cases,
        }


def within_variance(runs: np.ndarray) -> float | None:
    """Mean over cases (rows) of the variance across runs (columns, NaN = missing), over the
    cases with at least two values; None when no case has two."""
    runs = np.asarray(runs, dtype=np.float64)
    out = []
    for row in runs:
        present = row[~np.isnan(row)]
        if len(present) >= 2:
            out.append(float(np.var(present, ddof=1)))
    return float(np.mean(out)) if out else None


def decompose(
    base: np.ndarray, runs: Mapping[str, np.ndarray], *, judge_metric: bool
) -> Components:
    """Components of one metric of one system (module docstring). ``base``: one value per
    case; ``runs[f]``: cases x runs of factor ``f``, the base run as its first column."""
    base = np.asarray(base, dtype=np.float64)
    present = base[~np.isnan(base)]
    v = {f: within_variance(runs[f]) if f in runs else None for f in FACTORS}
    judge = v["judge"] if judge_metric else 0.0  # the judge scores no other metric
    j = judge or 0.0
    expert = None if v["expert"] is None else max(0.0, v["expert"] - j)
    client = None if v["client"] is None else max(0.0, v["client"] - j)
    cases = None
    if len(present) >= 2:
        noise = sum(x for x in (expert, client, judge) if x is not None)
        cases = max(0.0, float(np.var(present, ddof=1)) - noise)
    return Components(cases=cases, expert=expert, client=client, judge=judge, n_cases=len(present))


def pool(parts: Sequence[Components]) -> Components:
    """The mean of each component over systems that have it."""

    def mean(name: str) -> float | None:
        xs = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        return float(np.mean(xs)) if xs else None

    return Components(
        cases=mean("cases"),
        expert=mean("expert"),
        client=mean("client"),
        judge=mean("judge"),
        n_cases=max((p.n_cases for p in parts), default=0),
    )


def z_sum(alpha: float = 0.05, power: float = 0.8) -> float:
    """``z(1 - alpha/2) + z(power)`` (2.8016 for 0.05 and 0.8)."""
    nd = NormalDist()
    return nd.inv_cdf(1.0 - alpha / 2.0) + nd.inv_cdf(power)


def min_detectable_difference(
    total: float, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """MDD of two means over ``n`` cases each with per-case variance ``total``."""
    if n < 1:
        raise ValueError("n must be positive")
    return z_sum(alpha, power) * math.sqrt(2.0 * total / n)
