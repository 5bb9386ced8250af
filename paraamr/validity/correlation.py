"""Rank correlations of a measure with the human score, with bootstrap CIs that resample sources.

Ranks, Spearman's rho and Kendall's tau-b come from ``scipy.stats`` (``rankdata``,
``spearmanr``, ``kendalltau``; ties averaged / corrected). Confidence intervals are percentile
bootstrap intervals from resampling *sources* with replacement (all paraphrases of a drawn source
come along), since paraphrases of one source are not independent. scipy's ``bootstrap``
resamples items, not groups, and would sort every resample again; the source resamples here are
weight matrices (:func:`source_weights`) with ranks and correlations computed for all resamples
at once (:func:`weighted_ranks`, :func:`weighted_pearson`), tested equal to scipy on the
expanded data.

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
    "pearson",
    "spearman",
    "kendall",
    "source_weights",
    "bootstrap_indices",
    "weighted_ranks",
    "weighted_pearson",
    "spearman_resampled",
    "percentile_interval",
    "source_bootstrap",
    "correlate",
]


def rank(x: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (``scipy.stats.rankdata``)."""
    from scipy.stats import rankdata

    return rankdata(np.asarray(x, dtype=np.float64), method="average")


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r (``scipy.stats.pearsonr``; ``nan`` when either side is constant or there are
    < 2 values).

    >>> pearson([1, 2, 3], [2, 4, 7]) > 0.99
    True
    """
    from scipy.stats import pearsonr

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(pearsonr(x, y).statistic)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (``scipy.stats.spearmanr``; ``nan`` when either side is constant or there
    are < 2 values)."""
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


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


def source_weights(groups: Sequence, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Multiplicity of each item in ``n_resamples`` resamples of the groups (sources) with
    replacement, shape ``(n_resamples, n_items)``: each resample draws as many groups as there
    are, and an item counts as often as its group was drawn.

    >>> source_weights(["a", "a", "b"], 2, seed=1).tolist()
    [[1, 1, 1], [0, 0, 2]]
    """
    _, inv = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    if inv.size == 0 or n_resamples <= 0:
        return np.zeros((0, inv.size), dtype=np.int64)
    n_groups = int(inv.max()) + 1
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_groups, size=(n_resamples, n_groups))
    counts = np.stack([np.bincount(d, minlength=n_groups) for d in draws])
    return counts[:, inv]


def bootstrap_indices(groups: Sequence, n_resamples: int = 1000, seed: int = 0) -> list[np.ndarray]:
    """Item indices of the resamples of :func:`source_weights` (a group drawn twice contributes
    its items twice).

    >>> [i.tolist() for i in bootstrap_indices(["a", "a", "b"], 2, seed=1)]
    [[0, 1, 2], [2, 2]]
    """
    w = source_weights(groups, n_resamples, seed)
    return [np.repeat(np.arange(w.shape[1]), row) for row in w]


def weighted_ranks(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ranks of ``x`` in each weighted resample, shape ``weights.shape``: the average rank each
    item would get in the data set with every item repeated ``weight`` times (ties averaged),
    computed without building that data set.

    >>> weighted_ranks(np.array([3.0, 1.0, 3.0]), np.array([[1, 2, 1]])).tolist()
    [[3.5, 1.5, 3.5]]
    """
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.r_[0, np.flatnonzero(xs[1:] != xs[:-1]) + 1]
    ends = np.r_[starts[1:], x.size]
    group = np.repeat(np.arange(starts.size), ends - starts)
    cum = np.cumsum(weights[:, order], axis=1, dtype=np.float64)
    total = cum[:, ends - 1]
    before = np.where(starts > 0, cum[:, np.maximum(starts - 1, 0)], 0.0)
    avg = before + (total - before + 1) / 2.0
    out = np.empty(weights.shape, dtype=np.float64)
    out[:, order] = avg[:, group]
    return out


def weighted_pearson(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson correlation per row of ``weights`` (items repeated ``weight`` times)."""
    w = weights.astype(np.float64)
    n = w.sum(axis=1, keepdims=True)
    ma, mb = (w * a).sum(1, keepdims=True) / n, (w * b).sum(1, keepdims=True) / n
    da, db = a - ma, b - mb
    cov = (w * da * db).sum(1)
    den = np.sqrt((w * da * da).sum(1) * (w * db * db).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, cov / np.where(den > 0, den, 1.0), np.nan)


def spearman_resampled(x: Sequence[float], y: Sequence[float], weights: np.ndarray) -> np.ndarray:
    """Spearman's rho in each weighted resample, equal to :func:`spearman` on the expanded data
    (vectorised: no per-resample sort).

    >>> w = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])
    >>> r = spearman_resampled([1, 2, 3, 4], [1, 3, 2, 4], w)
    >>> bool(np.isclose(r[1], spearman([1, 1, 3, 4], [1, 1, 2, 4])))
    True
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    out = []
    for start in range(0, weights.shape[0], 200):  # bounded memory
        w = weights[start : start + 200]
        out.append(weighted_pearson(weighted_ranks(x, w), weighted_ranks(y, w), w))
    return np.concatenate(out) if out else np.zeros(0)


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
) -> tuple[float, float]:
    """Percentile interval of ``stat(index array)`` over resamples of the groups (sources).

    >>> lo, hi = source_bootstrap(lambda idx: float(len(idx)), ["a", "a", "b"], 200)
    >>> 2.0 <= lo <= hi <= 4.0
    True
    """
    return percentile_interval(
        [stat(i) for i in bootstrap_indices(groups, n_resamples, seed)], alpha
    )


def correlate(
    measure: Sequence[float],
    human: Sequence[float],
    sources: Sequence,
    method: str = "spearman",
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    weights: np.ndarray | None = None,
) -> Correlation:
    """Correlation of ``measure`` with ``human`` (aligned per item; non-finite pairs left out),
    with a bootstrap interval resampling ``sources``, or using the given resample ``weights``
    (:func:`source_weights` over the same items, so several measures share their resamples).
    Spearman resamples are computed vectorised, Kendall's one by one (``scipy``).

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
    weights = source_weights(src[ok], n_resamples, seed) if weights is None else weights[:, ok]
    x, y, src = x[ok], y[ok], src[ok]
    if method == "spearman":
        boot = spearman_resampled(x, y, weights).tolist()
    else:
        items = np.arange(x.size)
        boot = [fn(x[j], y[j]) for j in (np.repeat(items, w) for w in weights)]
    lo, hi = percentile_interval(boot, alpha)
    return Correlation(
        method, fn(x, y), lo, hi, int(x.size), len(set(src.tolist())), int(weights.shape[0])
    )
