"""Bootstrap confidence intervals, paired bootstrap tests and Holm's correction.

Everything is seeded and vectorised with numpy. The unit of resampling is the case (dialogue).

One :class:`ResamplePlan` holds a single matrix of uniform draws, shape ``(resamples, n_max)``.
A metric observed on ``n`` cases takes its resample indices as ``floor(U[:, :n] * n)`` into its
own present values, so

* every metric's interval uses only the cases where that metric is present (its ``n``), and is
  an ordinary nonparametric bootstrap over those ``n`` cases;
* metrics of one row that share a presence pattern reuse exactly the same resamples: the index
  matrix of a given ``n`` (and its resample-count matrix, so that each metric costs one
  matrix-vector product) is computed once and reused across the metrics of a row;
* results are memoised by the values themselves, so a table that shows the same system twice
  (Table 3, Tables 6/7, metrics JSON) bootstraps it once;
* adding or removing another system never changes a row's interval (the plan depends only on
  the seed and the number of resamples, not on row order).

Percentile intervals: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of
the resampled means (numpy's default linear interpolation).

Paired test of two systems: differences on the cases where both have the metric, bootstrapped
as above; the two-sided p-value is the share of resampled mean differences, recentred on the
observed mean, at least as far from it as the observed mean is from zero, with the usual +1
correction so that it is never 0: ``p = (1 + #{|m_b - d| >= |d|}) / (B + 1)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` cases with its bootstrap interval; all ``None`` when ``n == 0``."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int

    def scaled(self, factor: float) -> Estimate:
        """The same estimate with mean and bounds multiplied by ``factor`` (e.g. 100)."""

        def s(x: float | None) -> float | None:
            return None if x is None else x * factor

        return Estimate(s(self.mean), s(self.ci_low), s(self.ci_high), self.n)


@dataclass(frozen=True)
class PairedResult:
    """Mean difference ``a - b`` over ``n`` common cases, its interval and two-sided p-value."""

    diff: Estimate
    p_value: float | None

    @property
    def n(self) -> int:
        return self.diff.n


class ResamplePlan:
    """A seeded matrix of uniform draws from which every resample index matrix is derived."""

    def __init__(
        self,
        *,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        confidence: float = DEFAULT_CONFIDENCE,
    ) -> None:
        if resamples < 1:
            raise ValueError("resamples must be positive")
        if not 0.0 < confidence < 1.0:
            raise ValueError("confidence must lie strictly between 0 and 1")
        self.resamples = resamples
        self.seed = seed
        self.confidence = confidence
        self._uniform: FloatArray = np.empty((resamples, 0))
        self._cache: dict[int, npt.NDArray[np.intp]] = {}
        self._counts: dict[int, FloatArray] = {}
        self._memo: dict[bytes, Estimate | PairedResult] = {}

    def _ensure(self, n: int) -> None:
        if n <= self._uniform.shape[1]:
            return
        # Draw the whole matrix afresh from the seed so that its first columns never depend on
        # the order in which sizes were requested.
        width = max(n, 2 * self._uniform.shape[1])
        rng = np.random.default_rng(self.seed)
        self._uniform = rng.random((width, self.resamples)).T
        self._cache.clear()

    def indices(self, n: int) -> npt.NDArray[np.intp]:
        """Resample indices into ``n`` present cases, shape ``(resamples, n)``; cached by ``n``."""
        if n < 1:
            raise ValueError("need at least one case")
        cached = self._cache.get(n)
        if cached is not None:
            return cached
        self._ensure(n)
        idx = np.floor(self._uniform[:, :n] * n).astype(np.intp)
        np.minimum(idx, n - 1, out=idx)
        if len(self._cache) >= 2:
            self._cache.pop(next(iter(self._cache)))
        self._cache[n] = idx
        return idx

    def counts(self, n: int) -> FloatArray:
        """How often each of ``n`` cases is drawn in each resample, shape ``(resamples, n)``."""
        cached = self._counts.get(n)
        if cached is not None:
            return cached
        idx = self.indices(n)
        rows = np.arange(self.resamples, dtype=np.intp)[:, None] * n
        flat = np.bincount((rows + idx).ravel(), minlength=self.resamples * n)
        counts: FloatArray = flat.reshape(self.resamples, n).astype(np.float64)
        if len(self._counts) >= 4:
            self._counts.pop(next(iter(self._counts)))
        self._counts[n] = counts
        return counts

    def resampled_means(self, values: FloatArray) -> FloatArray:
        """Means of ``values`` (no missing entries) under every resample, shape ``(resamples,)``.

        Computed as ``counts(n) @ values / n``: the same resamples as :meth:`indices`, one
        matrix-vector product per metric.
        """
        n = len(values)
        means: FloatArray = self.counts(n) @ values / n
        return means

    def _bounds(self, means: FloatArray) -> tuple[float, float]:
        alpha = 1.0 - self.confidence
        lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
        return float(lo), float(hi)

    def mean(self, values: Sequence[float | None] | FloatArray) -> Estimate:
        """Mean of the present values and its percentile interval; missing = ``None``/NaN."""
        present = _present(values)
        n = len(present)
        if n == 0:
            return Estimate(None, None, None, 0)
        centre = float(present.mean())
        if n == 1 or np.all(present == present[0]):
            return Estimate(centre, centre, centre, n)
        key = _digest(b"mean", present)
        memo = self._memo.get(key)
        if isinstance(memo, Estimate):
            return memo
        lo, hi = self._bounds(self.resampled_means(present))
        est = Estimate(centre, lo, hi, n)
        self._remember(key, est)
        return est

    def _remember(self, key: bytes, value: Estimate | PairedResult) -> None:
        if len(self._memo) >= 65_536:
            self._memo.clear()
        self._memo[key] = value

    def means(self, matrix: FloatArray) -> list[Estimate]:
        """One :meth:`mean` per column of a cases x metrics matrix (NaN = missing)."""
        return [self.mean(matrix[:, j]) for j in range(matrix.shape[1])]

    def paired(
        self,
        a: Sequence[float | None] | FloatArray,
        b: Sequence[float | None] | FloatArray,
    ) -> PairedResult:
        """Paired bootstrap of ``mean(a - b)`` over the cases where both are present.

        ``a`` and ``b`` are aligned case by case (same order, same length).
        """
        av = _as_float(a)
        bv = _as_float(b)
        if av.shape != bv.shape:
            raise ValueError("paired values must be aligned (same length)")
        both = ~(np.isnan(av) | np.isnan(bv))
        d = av[both] - bv[both]
        n = len(d)
        if n == 0:
            return PairedResult(Estimate(None, None, None, 0), None)
        centre = float(d.mean())
        if n == 1 or np.all(d == d[0]):
            p = 1.0 if centre == 0.0 or n == 1 else 1.0 / (self.resamples + 1)
            return PairedResult(Estimate(centre, centre, centre, n), p)
        key = _digest(b"paired", d)
        memo = self._memo.get(key)
        if isinstance(memo, PairedResult):
            return memo
        boot = self.resampled_means(d)
        lo, hi = self._bounds(boot)
        extreme = int(np.count_nonzero(np.abs(boot - centre) >= abs(centre)))
        p = (1.0 + extreme) / (self.resamples + 1.0)
        result = PairedResult(Estimate(centre, lo, hi, n), min(1.0, p))
        self._remember(key, result)
        return result


def _digest(kind: bytes, values: FloatArray) -> bytes:
    """Memo key: results depend only on the values (in order) and the plan."""
    return hashlib.blake2b(kind + np.ascontiguousarray(values).tobytes(), digest_size=16).digest()


def _as_float(values: Sequence[float | None] | FloatArray) -> FloatArray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _present(values: Sequence[float | None] | FloatArray) -> FloatArray:
    arr = _as_float(values)
    present: FloatArray = arr[~np.isnan(arr)]
    return present


def bootstrap_mean(
    values: Sequence[float | None] | FloatArray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Convenience wrapper: :meth:`ResamplePlan.mean` with a fresh plan."""
    return ResamplePlan(resamples=resamples, seed=seed, confidence=confidence).mean(values)


def paired_bootstrap(
    a: Sequence[float | None] | FloatArray,
    b: Sequence[float | None] | FloatArray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedResult:
    """Convenience wrapper: :meth:`ResamplePlan.paired` with a fresh plan."""
    return ResamplePlan(resamples=resamples, seed=seed, confidence=confidence).paired(a, b)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in input order; ``None`` entries stay ``None``.

    The family is the non-missing entries: with ``m`` of them sorted ascending,
    ``adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``.
    """
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    for p, _ in present:
        if not 0.0 <= p <= 1.0 or np.isnan(p):
            raise ValueError(f"p-value outside [0, 1]: {p}")
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present, key=lambda t: (t[0], t[1]))):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
