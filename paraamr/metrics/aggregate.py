"""Aggregation as in the ParaAMR scripts: mean over a source's paraphrases, then over sources.

Per-source values are kept (one row per source) so that shards merge exactly and bootstrap
confidence intervals resample sources. Non-finite values never enter a mean: :func:`source_means`
rejects them.

>>> rows = source_means([{"sim": 0.8, "ted": 2}, {"sim": 0.6, "ted": 4}], ["sim", "ted"])
>>> rows
{'sim': 0.7, 'ted': 3.0}
>>> corpus_means([rows, {"sim": 0.5, "ted": 1.0}], ["sim", "ted"])
{'sim': 0.6, 'ted': 2.0}
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from paraamr.errors import InputError

__all__ = ["source_means", "corpus_means", "bootstrap_ci", "mean_std"]

#: Resampled indices held at once by :func:`bootstrap_ci` (4M int64 = 32 MB).
BOOTSTRAP_BLOCK = 1 << 22


def source_means(pair_rows: Sequence[Mapping[str, float]], metrics: Sequence[str]) -> dict:
    """Mean of each metric over one source's pairs (pairs with ``None`` for a metric are left
    out of that metric's mean; a metric with no values gives ``None``)."""
    out: dict[str, float | None] = {}
    for m in metrics:
        vals = [r[m] for r in pair_rows if r.get(m) is not None]
        for v in vals:
            if not math.isfinite(v):
                raise InputError(f"non-finite {m} value {v!r} cannot enter a mean")
        out[m] = float(sum(vals) / len(vals)) if vals else None
    return out


def mean_std(xs: Sequence[float], digits: int | None = 4) -> tuple[float, float]:
    """Mean and sample standard deviation (``n - 1``; 0 for one value) over seeds or runs,
    rounded to ``digits`` (``None``: not rounded). The one mean ± std of the project.

    >>> mean_std([1.0, 2.0, 4.0])
    (2.3333, 1.5275)
    >>> mean_std([0.5])
    (0.5, 0.0)
    """
    if not xs:
        raise InputError("mean_std of no values")
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return (mean, sd) if digits is None else (round(mean, digits), round(sd, digits))


def corpus_means(source_rows: Sequence[Mapping[str, float]], metrics: Sequence[str]) -> dict:
    """Mean over sources of the per-source means (``None`` entries skipped per metric)."""
    return source_means(source_rows, metrics)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean, resampling sources with replacement.

    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0], seed=0)
    >>> 1.0 <= lo <= 2.5 <= hi <= 4.0
    True
    """
    if isinstance(values, np.ndarray):  # a flat array is used in place (no Python floats)
        x = values.astype(np.float64, copy=False)
    else:
        x = np.asarray([v for v in values if v is not None], dtype=np.float64)
    if x.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    # resamples drawn in blocks of rows (the same stream as one (n_resamples, n) draw), so memory
    # stays at ~BOOTSTRAP_BLOCK indices instead of n_resamples * n (8 GB for 1M sources)
    rows = max(1, BOOTSTRAP_BLOCK // x.size)
    means = np.concatenate(
        [
            x[rng.integers(0, x.size, size=(min(rows, n_resamples - i), x.size))].mean(axis=1)
            for i in range(0, n_resamples, rows)
        ]
    )
    return (float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2)))
