"""The human ceiling: split-half agreement of the judges, Spearman-Brown corrected.

For each split, every item's judgements are shuffled and cut into two halves (with an odd count
the second half gets the extra judgement); the two halves' mean scores are correlated across
items, and the correlation of half-panels ``r`` is stepped up to the full panel with the
Spearman-Brown formula ``2r / (1 + r)``: the expected agreement of two independent panels of the
file's size. Repeated over ``n_splits`` random splits. Only items with two or more judgements
take part.

Read a metric's correlation with the mean human score against ``sqrt(r_full)``: a measure equal
to the true score would correlate with the judges' mean at about that value (attenuation by the
judges' noise), so it is the ceiling; ``r_full`` itself is what a second panel of people would
reach.

>>> spearman_brown(0.5)
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from paraamr.validity.correlation import METHODS, pearson

__all__ = ["SplitHalf", "spearman_brown", "split_half", "half_means"]


def spearman_brown(r: float, factor: float = 2.0) -> float:
    """Reliability of a panel ``factor`` times larger than the one with reliability ``r``."""
    return factor * r / (1 + (factor - 1) * r)


@dataclass(frozen=True)
class SplitHalf:
    """Split-half agreement over repeated random splits (mean and 2.5/97.5 percentiles)."""

    method: str
    r_half: float
    r_full: float
    r_full_lo: float
    r_full_hi: float
    ceiling: float
    n_items: int
    n_splits: int
    judgements_per_item: float

    def to_json(self) -> dict:
        return asdict(self)


def half_means(
    scores: np.ndarray, item_of: np.ndarray, n_items: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One random split: the mean score of each item's two halves (vectorised).

    Args:
        scores: every judgement's score, flat.
        item_of: the item index (0..n_items-1) of each judgement.
        n_items: number of items (every item must have >= 2 judgements).
        rng: source of randomness.
    """
    order = np.lexsort((rng.random(scores.size), item_of))
    it = item_of[order]
    counts = np.bincount(item_of, minlength=n_items)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    pos = np.arange(scores.size) - starts[it]
    first = pos < counts[it] // 2
    s = scores[order]
    a = np.bincount(it[first], weights=s[first], minlength=n_items) / (counts // 2)
    b = np.bincount(it[~first], weights=s[~first], minlength=n_items) / (counts - counts // 2)
    return a, b


def split_half(
    judgements: Sequence[Sequence[float]],
    n_splits: int = 100,
    seed: int = 0,
    method: str = "spearman",
) -> SplitHalf:
    """Split-half agreement of per-item judgement lists (``method``: spearman, kendall or
    pearson).

    >>> sh = split_half([[1, 1], [2, 2], [3, 3]], n_splits=5)
    >>> sh.r_half, sh.r_full, sh.n_items
    (1.0, 1.0, 3)
    """
    fn = pearson if method == "pearson" else METHODS[method]
    kept = [list(map(float, j)) for j in judgements if len(j) >= 2]
    n = len(kept)
    if n < 3:
        nan = float("nan")
        return SplitHalf(method, nan, nan, nan, nan, nan, n, 0, 0.0)
    scores = np.fromiter((s for j in kept for s in j), dtype=np.float64)
    item_of = np.repeat(np.arange(n), [len(j) for j in kept])
    rng = np.random.default_rng(seed)
    halves, fulls = [], []
    for _ in range(n_splits):
        a, b = half_means(scores, item_of, n, rng)
        r = float(fn(a, b))
        halves.append(r)
        fulls.append(spearman_brown(r))
    r_full = float(np.mean(fulls))
    return SplitHalf(
        method=method,
        r_half=float(np.mean(halves)),
        r_full=r_full,
        r_full_lo=float(np.quantile(fulls, 0.025)),
        r_full_hi=float(np.quantile(fulls, 0.975)),
        ceiling=float(np.sqrt(r_full)) if r_full > 0 else float("nan"),
        n_items=n,
        n_splits=n_splits,
        judgements_per_item=scores.size / n,
    )
