"""Aggregation against hand computations: bootstrap intervals against a hand resample with the
same seed and against ``scipy.stats.bootstrap`` (percentile), whatever the block size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from paraamr.metrics import aggregate
from paraamr.metrics.aggregate import bootstrap_ci

VALUES = np.random.default_rng(7).gamma(2.0, 0.2, size=501).tolist()


def _hand(values, n, seed, alpha=0.05):
    """The textbook percentile bootstrap: n resamples of the sources with replacement."""
    x = np.asarray(values)
    rng = np.random.default_rng(seed)
    means = [x[rng.integers(0, x.size, size=x.size)].mean() for _ in range(n)]
    return np.quantile(means, alpha / 2), np.quantile(means, 1 - alpha / 2)


@pytest.mark.parametrize("block", [1 << 22, 501 * 3, 1000, 1])
def test_bootstrap_equals_a_hand_resample_with_the_same_seed(monkeypatch, block):
    monkeypatch.setattr(aggregate, "BOOTSTRAP_BLOCK", block)  # 1 row, 2 rows, 3 rows, all rows
    lo, hi = bootstrap_ci(VALUES, 200, seed=11)
    assert (lo, hi) == pytest.approx(_hand(VALUES, 200, 11), rel=1e-12, abs=1e-15)


def test_bootstrap_agrees_with_scipy_percentile_interval():
    lo, hi = bootstrap_ci(VALUES, 4000, seed=0)
    ref = stats.bootstrap(
        (np.asarray(VALUES),), np.mean, n_resamples=4000, method="percentile", random_state=1
    ).confidence_interval
    # different random streams: the two intervals agree to Monte Carlo error (~1% of the width)
    width = ref.high - ref.low
    assert abs(lo - ref.low) < 0.03 * width and abs(hi - ref.high) < 0.03 * width
    assert np.mean(VALUES) - lo == pytest.approx(1.96 * np.std(VALUES) / np.sqrt(501), rel=0.1)


def test_none_values_are_left_out():
    assert bootstrap_ci([1.0, None, 3.0], 50, seed=2) == bootstrap_ci([1.0, 3.0], 50, seed=2)


def test_flat_merge_summary_equals_the_list_computation():
    """Table 2's flat merge (one NumPy view, NaN for None) gives the mean and interval of the
    plain Python list of the finite values."""
    from array import array
    from statistics import fmean

    from paraamr.metrics.base import mean_score

    rng = np.random.default_rng(5)
    vals = rng.normal(0.7, 0.1, 3001)
    vals[::7] = np.nan
    finite = [float(v) for v in vals if v == v]
    score = mean_score("sim", array("d", vals.tolist()), bootstrap=200, seed=3)
    assert score.n == len(finite)
    mean, ci = score.value, score.interval
    assert mean == pytest.approx(fmean(finite), abs=1e-12)
    assert ci == bootstrap_ci(finite, 200, seed=3)
    empty = mean_score("sim", array("d"), bootstrap=5)
    assert (empty.value, empty.interval, empty.n) == (None, None, 0)
