"""Fluency and the perplexity filter: ROC, AUC and the thresholds a filter would use.

Positive class: fluent paraphrases (a strict majority of judges gave ``gm`` = 2). A filter keeps a
paraphrase when its perplexity is at most the threshold, so the classifier's score is
``-perplexity`` (lower perplexity = more fluent).

The ParaAMR paper's thresholds (120, 110, 85; :data:`PAPER_THRESHOLDS`) are GPT-2 perplexities.
Perplexity depends on the LM's tokenizer and training data, so a threshold does not carry over
between LMs: applied to another LM's perplexities, 120 is a different filter. The threshold that
keeps a given share of the fluent paraphrases (:func:`keep_threshold`) is what carries over.

>>> auc([3.0, 2.0, 1.0], [True, True, False])
1.0
>>> keep_threshold([10, 20, 30, 40], 0.75)
30.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from paraamr.validity.correlation import weighted_ranks

__all__ = [
    "PAPER_THRESHOLDS",
    "roc_curve",
    "auc",
    "auc_resampled",
    "keep_threshold",
    "FilterEffect",
    "filter_effect",
]

PAPER_THRESHOLDS = (120.0, 110.0, 85.0)
PAPER_THRESHOLD_NOTE = (
    "The paper's thresholds are GPT-2 perplexities; a perplexity threshold does not carry over "
    "between LMs (tokenizer and training data change the scale), so on another LM these rows show "
    "only what the same numbers would do, not what the paper's filter did."
)


def _clean(scores: Sequence[float], labels: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if s.shape != y.shape:
        raise ValueError("scores and labels differ in length")
    ok = np.isfinite(s)
    return s[ok], y[ok]


def roc_curve(
    scores: Sequence[float], labels: Sequence[bool]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fpr, tpr, thresholds)``: one point per distinct score, from the highest down, the
    first point (0, 0) at threshold ``+inf``; a sample is predicted positive when score >= t
    (``sklearn.metrics.roc_curve`` with every point kept; a class that is absent gives rates
    of 0 rather than scikit-learn's ``nan``).

    >>> fpr, tpr, t = roc_curve([0.9, 0.8, 0.8, 0.1], [True, False, True, False])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    import warnings

    from sklearn.metrics import roc_curve as sk_roc_curve

    s, y = _clean(scores, labels)
    if s.size == 0:
        return np.zeros(1), np.zeros(1), np.array([np.inf])
    with warnings.catch_warnings():  # one class only: scikit-learn warns and returns nan
        warnings.simplefilter("ignore")
        fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=False)
    thr = thr.astype(np.float64)
    thr[0] = np.inf
    return np.nan_to_num(fpr, nan=0.0), np.nan_to_num(tpr, nan=0.0), thr


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve: P(score of a random positive > a random negative's), ties half
    (``sklearn.metrics.roc_auc_score``); ``nan`` with one class only."""
    from sklearn.metrics import roc_auc_score

    s, y = _clean(scores, labels)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, s))


def auc_resampled(
    scores: Sequence[float], labels: Sequence[bool], weights: np.ndarray
) -> np.ndarray:
    """:func:`auc` in each weighted resample (items repeated ``weight`` times), vectorised;
    ``scores`` must be finite.

    >>> w = np.array([[1, 1, 1, 1], [2, 1, 0, 1]])
    >>> auc_resampled([0.1, 0.4, 0.35, 0.8], [False, False, True, True], w).tolist()
    [0.75, 1.0]
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if not np.isfinite(s).all():
        raise ValueError("auc_resampled needs finite scores")
    out = []
    for start in range(0, weights.shape[0], 200):
        w = weights[start : start + 200].astype(np.float64)
        r = weighted_ranks(s, w)
        wp, wn = (w * y).sum(1), (w * ~y).sum(1)
        u = (w * y * r).sum(1) - wp * (wp + 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where((wp > 0) & (wn > 0), u / (wp * wn), np.nan))
    return np.concatenate(out) if out else np.zeros(0)


def keep_threshold(fluent_ppl: Sequence[float], keep: float) -> float:
    """The smallest perplexity threshold that keeps at least ``keep`` of the fluent ones
    (a paraphrase is kept when ppl <= threshold)."""
    x = np.sort(np.asarray([v for v in fluent_ppl if math.isfinite(v)], dtype=np.float64))
    if x.size == 0:
        return float("nan")
    k = math.ceil(keep * x.size - 1e-9)
    return float(x[max(k, 1) - 1])


@dataclass(frozen=True)
class FilterEffect:
    """What ``keep ppl <= threshold`` does to the judged paraphrases."""

    threshold: float
    kept_fluent: float
    dropped_not_fluent: float
    dropped_all: float
    n_fluent: int
    n_not_fluent: int
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def filter_effect(
    ppl: Sequence[float], fluent: Sequence[bool], threshold: float, note: str = ""
) -> FilterEffect:
    """Share of fluent paraphrases kept, of the others dropped and of all dropped.

    >>> e = filter_effect([10, 50, 200, 300], [True, True, True, False], 100)
    >>> round(e.kept_fluent, 3), e.dropped_not_fluent, e.dropped_all
    (0.667, 1.0, 0.5)
    """
    x, y = _clean(ppl, fluent)
    keep = x <= threshold
    nf, nn = int(y.sum()), int((~y).sum())
    return FilterEffect(
        threshold=float(threshold),
        kept_fluent=float(keep[y].mean()) if nf else float("nan"),
        dropped_not_fluent=float((~keep[~y]).mean()) if nn else float("nan"),
        dropped_all=float((~keep).mean()) if x.size else float("nan"),
        n_fluent=nf,
        n_not_fluent=nn,
        note=note,
    )
