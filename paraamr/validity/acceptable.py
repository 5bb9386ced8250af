"""The *acceptable* similarity: where human judges call half of the pairs meaning-preserving.

A mean cosine hides what a reader sees: a corpus at mean similarity 0.58 may hold few pairs that
keep their source's meaning. The acceptable share (Table 2) is the share of a corpus's pairs whose
similarity is at least the cosine at which ParaBank-Eval's judges call half of the pairs
meaning-preserving. That cosine is calibrated here on the judgements, under the encoder that
scores the corpora (a threshold does not carry over between encoders):

1. every judged pair that is not a copy of its source (``sys_id`` 0, or equal up to case) gets the
   encoder's cosine to its source;
2. each judgement is a verdict: *meaning-preserving* when its meaning score is at least
   ``judge_cut`` (default 70: ParaBank-Eval's instructions score a same-meaning but awkward
   paraphrase 76 and a related but not identical one 60); a judge who marks the paraphrase
   nonsensical gives no meaning score, and that verdict counts as *not* meaning-preserving;
3. a logistic regression of the verdicts on the cosine, ``P(preserving) = σ(b0 + b1·cos)``
   (:func:`logistic_fit`, Newton's method), puts the half-way point at ``cos* = −b0 / b1``;
4. its 95% interval is a percentile bootstrap over sources (a source's pairs and judgements
   are resampled together).

>>> import numpy as np
>>> x = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
>>> y = np.array([0, 0, 0, 1, 0, 1, 1, 1])
>>> round(half_way(x, y), 4)   # symmetric about 0.5
0.5
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paraamr.errors import InputError

__all__ = [
    "JUDGE_CUT",
    "AcceptableThreshold",
    "logistic_fit",
    "half_way",
    "judged_pairs",
    "calibrate",
    "calibrate_parabank_eval",
    "MACHINE_CACHE",
    "JUDGEMENTS",
    "acceptable_shares",
]

#: a judgement calls a pair meaning-preserving at this meaning score (0-100) or above
JUDGE_CUT = 70.0
#: ``cache=MACHINE_CACHE``: keep a calibration once per machine (:func:`machine_cache_file`)
MACHINE_CACHE = "machine"
#: the judgements the acceptable similarity is calibrated on, inside the data folder
JUDGEMENTS = Path("paraphrase") / "parabank-eval" / "candidates.tsv"


def logistic_fit(x: np.ndarray, y: np.ndarray, max_iter: int = 100) -> tuple[float, float]:
    """``(b0, b1)`` of the maximum-likelihood logistic regression ``P(y=1) = σ(b0 + b1·x)``,
    by Newton's method (iteratively reweighted least squares) on two parameters.

    Raises:
        InputError: the verdicts are all one class, or the classes are separated by ``x``
            (the likelihood has no maximum: the half-way point is not identified).

    >>> b0, b1 = logistic_fit(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 1, 0, 1]))
    >>> round(b0, 4), round(b1, 4)
    (-1.3623, 0.9082)
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size == 0 or y.min() == y.max():
        raise InputError("logistic fit: the verdicts are all of one class (no half-way point)")
    neg, pos = x[y == 0], x[y == 1]
    if neg.max() <= pos.min() or pos.max() <= neg.min():
        raise InputError("logistic fit: the verdicts are separated by the score (no maximum)")
    X = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        w = p * (1.0 - p)
        grad = X.T @ (y - p)
        hess = X.T @ (X * w[:, None])
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            raise InputError("logistic fit: singular information matrix") from None
        beta = beta + step
        if not np.all(np.isfinite(beta)) or abs(beta[1]) > 1e6:
            raise InputError("logistic fit: the verdicts are separated by the score (no maximum)")
        if np.max(np.abs(step)) < 1e-10:
            return float(beta[0]), float(beta[1])
    raise InputError(f"logistic fit: no convergence in {max_iter} Newton steps")


def half_way(x: np.ndarray, y: np.ndarray) -> float:
    """The score where the fitted probability of a positive verdict is one half.

    Raises:
        InputError: the fit is not identified, or the probability falls with the score.
    """
    b0, b1 = logistic_fit(x, y)
    if b1 <= 0:
        raise InputError("logistic fit: the verdicts do not rise with the similarity")
    return -b0 / b1


@dataclass(frozen=True)
class AcceptableThreshold:
    """A calibrated threshold: the cosine, its 95% interval, how it was made."""

    threshold: float
    ci95: tuple[float, float]
    judge_cut: float
    encoder: str
    data: str
    n_pairs: int
    n_judgements: int
    n_preserving: int
    n_sources: int
    bootstrap: int
    seed: int
    draws: int = 0  # resamples that had a half-way point (the interval's quantiles)

    def signature(self) -> str:
        """``acceptable:sim>=0.598[0.569,0.629],judge>=70,enc:minilm,openvino,data:...,boot:200/200``
        (``boot``: the resamples with a half-way point, of those drawn)."""
        lo, hi = self.ci95
        return (
            f"acceptable:sim>={self.threshold:.3f}[{lo:.3f},{hi:.3f}],"
            f"judge>={self.judge_cut:g},enc:{self.encoder},data:{self.data},"
            f"boot:{self.draws}/{self.bootstrap}"
        )

    def to_json(self) -> dict:
        return {**asdict(self), "ci95": list(self.ci95), "signature": self.signature()}

    @classmethod
    def from_json(cls, d: dict) -> AcceptableThreshold:
        d = {k: v for k, v in d.items() if k != "signature"}
        return cls(**{**d, "ci95": tuple(d["ci95"])})


def judged_pairs(items: Sequence[Any], judge_cut: float = JUDGE_CUT) -> dict:
    """The judgements as arrays: per non-copy item its ``(source, paraphrase)``, and per
    judgement the item it belongs to and its verdict (meaning ``>= judge_cut``; a nonsensical
    mark, which has no meaning score, is a negative verdict).

    >>> from paraamr.validity.judgements import Item, Judgement
    >>> a = Item("1", "A cat.", "One cat.", 5, "f", 2, {"3"},
    ...          judgements=[Judgement(80, 2, "w", 2), Judgement(None, 0, "v", 3)])
    >>> c = Item("1", "A cat.", "A cat.", 5, "f", 4, {"0"}, judgements=[Judgement(100, 2, "w", 4)])
    >>> d = judged_pairs([a, c], 70)
    >>> d["pairs"], d["item"].tolist(), d["verdict"].tolist(), d["source"]
    ([('A cat.', 'One cat.')], [0, 0], [1, 0], ['1'])
    """
    pairs, sources, item_of, verdict = [], [], [], []
    for it in items:
        if it.is_copy or not it.judgements:
            continue
        k = len(pairs)
        pairs.append((it.source, it.paraphrase))
        sources.append(it.source_id)
        for j in it.judgements:
            item_of.append(k)
            verdict.append(j.meaning is not None and j.meaning >= judge_cut)
    return {
        "pairs": pairs,
        "source": sources,
        "item": np.asarray(item_of, dtype=np.int64),
        "verdict": np.asarray(verdict, dtype=np.int8),
    }


def calibrate(
    cosines: np.ndarray,
    judged: dict,
    *,
    judge_cut: float,
    encoder: str,
    data: str,
    bootstrap: int = 200,
    seed: int = 0,
) -> AcceptableThreshold:
    """The half-way cosine of the judged pairs (``cosines[i]`` for ``judged["pairs"][i]``) and
    its percentile-bootstrap interval over sources."""
    cosines = np.asarray(cosines, dtype=np.float64)
    item, verdict = judged["item"], judged["verdict"]
    x = cosines[item]
    t = half_way(x, verdict)
    src_ids = {s: k for k, s in enumerate(dict.fromkeys(judged["source"]))}
    src_of_item = np.asarray([src_ids[s] for s in judged["source"]], dtype=np.int64)
    src = src_of_item[item]
    order = np.argsort(src, kind="stable")
    bounds = np.searchsorted(src[order], np.arange(len(src_ids) + 1))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(bootstrap):
        pick = rng.integers(0, len(src_ids), size=len(src_ids))
        idx = np.concatenate([order[bounds[s] : bounds[s + 1]] for s in pick])
        try:
            draws.append(half_way(x[idx], verdict[idx]))
        except InputError:
            continue  # a resample without a half-way point (counted: draws < bootstrap)
    if bootstrap and len(draws) < 0.9 * bootstrap:
        raise InputError(
            f"acceptable similarity: only {len(draws)} of {bootstrap} resamples of the "
            "sources have a half-way point: too few judgements for an interval"
        )
    lo, hi = (
        (float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))) if draws else (t, t)
    )
    return AcceptableThreshold(
        threshold=round(t, 6),
        ci95=(round(lo, 6), round(hi, 6)),
        judge_cut=float(judge_cut),
        encoder=encoder,
        data=data,
        n_pairs=len(judged["pairs"]),
        n_judgements=int(verdict.size),
        n_preserving=int(verdict.sum()),
        n_sources=len(src_ids),
        bootstrap=bootstrap,
        seed=seed,
        draws=len(draws),
    )


def machine_cache_file(
    data_dir: str | Path, encoder_label: str, judge_cut: float, bootstrap: int, seed: int
) -> Path:
    """Where a calibration is kept once per machine: the cache folder
    (:func:`paraamr.datadir.cache_root` ``/acceptable/``), the file named by the encoder, the
    settings and the judgement files' contents (``candidates.tsv`` and ``ref.tsv``)."""
    import hashlib

    from paraamr.datadir import cache_root

    h = hashlib.blake2b(f"{encoder_label}|{judge_cut}|{bootstrap}|{seed}".encode(), digest_size=8)
    for name in (JUDGEMENTS, JUDGEMENTS.with_name("ref.tsv")):
        f = Path(data_dir) / name
        h.update(f.read_bytes() if f.is_file() else b"<missing>")
    return cache_root() / "acceptable" / f"{h.hexdigest()}.json"


def calibrate_parabank_eval(
    data_dir: str | Path,
    encoder: Any,
    encoder_label: str,
    *,
    judge_cut: float = JUDGE_CUT,
    bootstrap: int = 200,
    seed: int = 0,
    cache: str | Path | None = None,
    batch_size: int = 128,
) -> AcceptableThreshold:
    """:func:`calibrate` on ParaBank-Eval's judgements (``<data_dir>/paraphrase/parabank-eval``)
    under ``encoder``; with ``cache`` (a JSON file, or :data:`MACHINE_CACHE` for
    :func:`machine_cache_file`), the result is read from there when it was made with the same
    encoder, cut, resamples and seed, and written there otherwise."""
    from paraamr.metrics.semantic import cosine_pairs
    from paraamr.validity.judgements import read_judgements

    if cache == MACHINE_CACHE:
        cache = machine_cache_file(data_dir, encoder_label, judge_cut, bootstrap, seed)
    path = (Path(data_dir) / JUDGEMENTS).parent
    want = {"judge_cut": float(judge_cut), "encoder": encoder_label}
    want |= {"bootstrap": bootstrap, "seed": seed}
    if cache is not None and Path(cache).is_file():
        got = AcceptableThreshold.from_json(json.loads(Path(cache).read_text()))
        if all(getattr(got, k) == v for k, v in want.items()):
            return got
    js = read_judgements(str(path), layout="parabank-eval")
    judged = judged_pairs(js.items, judge_cut)
    cos = cosine_pairs(judged["pairs"], encoder, batch_size)
    res = calibrate(
        cos,
        judged,
        judge_cut=judge_cut,
        encoder=encoder_label,
        data=f"ParaBank-Eval({js.counts['judgements']}j)",
        bootstrap=bootstrap,
        seed=seed,
    )
    if cache is not None:
        from paraamr.utils import write_json_atomic

        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(Path(cache), res.to_json(), sort_keys=False)
    return res


def acceptable_shares(
    similarity: np.ndarray,
    source: np.ndarray,
    threshold: float,
    bootstrap: int = 0,
    seed: int = 0,
) -> tuple[float, tuple[float, float] | None]:
    """The share of pairs with ``similarity >= threshold`` and, with ``bootstrap`` resamples,
    its 95% percentile interval resampling sources (``source[i]``: pair ``i``'s source).

    >>> acceptable_shares(np.array([0.9, 0.2, 0.8, 0.75]), np.array([0, 0, 1, 2]), 0.75)
    (0.75, None)
    """
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.size == 0:
        return math.nan, None
    ok = (sim >= threshold).astype(np.float64)
    share = float(ok.mean())
    if not bootstrap:
        return share, None
    _, src = np.unique(np.asarray(source), return_inverse=True)
    n_src = int(src.max()) + 1
    hits = np.bincount(src, weights=ok, minlength=n_src)
    sizes = np.bincount(src, minlength=n_src).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = np.empty(bootstrap)
    for b in range(bootstrap):
        w = np.bincount(rng.integers(0, n_src, size=n_src), minlength=n_src)
        draws[b] = (w * hits).sum() / (w * sizes).sum()
    return share, (float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975)))
