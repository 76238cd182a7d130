"""Krippendorff's alpha for any number of annotators with missing ratings (nominal and
ordinal), from the coincidence matrix (Krippendorff, *Computing Krippendorff's Alpha-
Reliability*, 2011).

``units``: one sequence of values per unit (the ratings it got; missing ones left out); units
with fewer than two ratings are not pairable and do not count. alpha = 1 - D_o / D_e with
D_o = sum_ck o_ck d_ck / n and D_e = sum_ck n_c n_k d_ck / (n (n - 1)); nominal d_ck = [c != k],
ordinal d_ck = (sum_{g from c to k} n_g - (n_c + n_k) / 2)^2 over the ranked values.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from itertools import permutations


def coincidences(units: Sequence[Sequence[Hashable]]) -> Counter[tuple[Hashable, Hashable]]:
    o: Counter[tuple[Hashable, Hashable]] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for x, y in permutations(range(m), 2):
            o[(values[x], values[y])] += 1.0 / (m - 1)  # type: ignore[assignment]
    return o


Distance = Callable[[Hashable, Hashable], float]


def _nominal(c: Hashable, k: Hashable) -> float:
    return 0.0 if c == k else 1.0


def _ordinal(values: list[Hashable], n_c: dict[Hashable, float]) -> Distance:
    ranked = sorted(values)  # type: ignore[type-var]
    rank = {v: k for k, v in enumerate(ranked)}

    def d(c: Hashable, k: Hashable) -> float:
        lo, hi = sorted((rank[c], rank[k]))
        s = sum(n_c[ranked[g]] for g in range(lo, hi + 1))
        return (s - (n_c[c] + n_c[k]) / 2) ** 2

    return d


def alpha(units: Sequence[Sequence[Hashable]], level: str = "nominal") -> float:
    """Krippendorff's alpha; NaN when fewer than two pairable values or no variation."""
    o = coincidences(units)
    n_c: dict[Hashable, float] = {}
    for (c, _), w in o.items():
        n_c[c] = n_c.get(c, 0.0) + w
    n = sum(n_c.values())
    if n < 2 or len(n_c) < 2:
        return math.nan
    values = list(n_c)
    d: Distance
    if level == "nominal":
        d = _nominal
    elif level == "ordinal":
        d = _ordinal(values, n_c)
    else:
        raise ValueError(f"level must be nominal or ordinal, got {level!r}")
    d_o = sum(w * d(c, k) for (c, k), w in o.items()) / n
    d_e = sum(n_c[c] * n_c[k] * d(c, k) for c in values for k in values) / (n * (n - 1))
    return math.nan if d_e == 0 else 1.0 - d_o / d_e


def pairable(units: Sequence[Sequence[Hashable]]) -> int:
    """How many units have at least two ratings."""
    return sum(1 for u in units if len(u) >= 2)
