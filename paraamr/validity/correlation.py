"""Rank correlations of a measure with the human score, with bootstrap CIs that resample sources.

Spearman's rho is the Pearson correlation of average ranks (computed here with numpy); Kendall's
tau is tau-b (``scipy.stats.kendalltau``, ties corrected). Confidence intervals are percentile
bootstrap intervals from resampling *sources* with replacement (all paraphrases of a drawn source
come along), since paraphrases of one source are not independent.

>>> rank([10, 20, 20, 5]).tolist()
[2.0, 3.5, 3.5, 1.0]
>>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 3)
0.8
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "METHODS",
    "Correlation",
    "rank",
    "spearman",
    "kendall",
    "bootstrap_indices",
    "percentile_interval",
    "source_bootstrap",
    "correlate",
]


def rank(x: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.r_[0, np.flatnonzero(xs[1:] != xs[:-1]) + 1] if n else np.zeros(0, int)
    ends = np.r_[starts[1:], n]
    out = np.empty(n)
    out[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return out


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (``nan`` when either side is constant or there are < 2 values)."""
    if len(x) < 2:
        return float("nan")
    return _pearson(rank(x), rank(y))


def kendall(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (``nan`` when either side is constant or there are < 2 values).

    >>> kendall([1, 2, 3], [3, 2, 1])
    -1.0
    """
    from scipy.stats import kendalltau

    if len(x) < 2:
        return float("nan")
    return float(kendalltau(x, y).statistic)


METHODS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "spearman": spearman,
    "kendall": kendall,
}


@dataclass(frozen=True)
class Correlation:
    """One correlation with its 95% (``1 - alpha``) source-bootstrap interval."""

    method: str
    value: float
    lo: float
    hi: float
    n_items: int
    n_sources: int
    n_resamples: int

    def to_json(self) -> dict:
        return asdict(self)


def bootstrap_indices(groups: Sequence, n_resamples: int = 1000, seed: int = 0) -> list[np.ndarray]:
    """Item indices of ``n_resamples`` resamples of the groups (sources) with replacement.

    Each resample draws as many groups as there are and takes all items of each drawn group (a
    group drawn twice contributes its items twice).

    >>> [len(i) for i in bootstrap_indices(["a", "a", "b"], 3, seed=1)]
    [3, 2, 4]
    """
    _, inv = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    if inv.size == 0 or n_resamples <= 0:
        return []
    members = [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        draw = rng.integers(0, len(members), size=len(members))
        out.append(np.concatenate([members[g] for g in draw]))
    return out


def percentile_interval(values: Sequence[float], alpha: float = 0.05) -> tuple[float, float]:
    """``(alpha/2, 1 - alpha/2)`` quantiles of the finite values (``nan`` if there are none)."""
    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    if v.size == 0:
        return (float("nan"), float("nan"))
    return (float(np.quantile(v, alpha / 2)), float(np.quantile(v, 1 - alpha / 2)))


def source_bootstrap(
    stat: Callable[[np.ndarray], float],
    groups: Sequence,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    indices: Sequence[np.ndarray] | None = None,
) -> tuple[float, float]:
    """Percentile interval of ``stat(index array)`` over resamples of the groups (sources);
    ``indices`` reuses resamples drawn once by :func:`bootstrap_indices`.

    >>> lo, hi = source_bootstrap(lambda idx: float(len(idx)), ["a", "a", "b"], 200)
    >>> 2.0 <= lo <= hi <= 4.0
    True
    """
    if indices is None:
        indices = bootstrap_indices(groups, n_resamples, seed)
    return percentile_interval([stat(i) for i in indices], alpha)


def correlate(
    measure: Sequence[float],
    human: Sequence[float],
    sources: Sequence,
    method: str = "spearman",
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    indices: Sequence[np.ndarray] | None = None,
) -> Correlation:
    """Correlation of ``measure`` with ``human`` (aligned per item; non-finite pairs left out),
    with a bootstrap interval resampling ``sources`` (or the given resample ``indices`` of the
    items, drawn with :func:`bootstrap_indices` over the same items).

    >>> c = correlate([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 6, 5], list("aabbcc"), n_resamples=50)
    >>> round(c.value, 3), c.n_items, c.n_sources, c.lo <= c.value <= c.hi
    (0.943, 6, 3, True)
    """
    fn = METHODS[method]
    x, y = np.asarray(measure, dtype=np.float64), np.asarray(human, dtype=np.float64)
    src = np.asarray(sources, dtype=object)
    if not x.shape == y.shape == src.shape:
        raise ValueError("measure, human and sources differ in length")
    ok = np.isfinite(x) & np.isfinite(y)
    if indices is None:
        indices = bootstrap_indices(src[ok], n_resamples, seed)
        x, y, src, ok = x[ok], y[ok], src[ok], np.ones(int(ok.sum()), dtype=bool)
    boot = [fn(x[j], y[j]) for j in (i[ok[i]] for i in indices)]
    lo, hi = percentile_interval(boot, alpha)
    return Correlation(
        method,
        fn(x[ok], y[ok]),
        lo,
        hi,
        int(ok.sum()),
        len(set(src[ok].tolist())),
        len(indices),
    )
