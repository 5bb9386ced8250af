"""From measures and judgements to the numbers of the validity report (plain JSON-able dicts).

- ``meaning``: Spearman and Kendall of each measure with the mean human meaning score, with
  source-bootstrap 95% intervals (Kendall's: overall only), overall and per source-length
  bucket;
- ``ceiling``: split-half agreement of the judges (Spearman-Brown corrected), same subsets;
- ``fluency``: ROC AUC of perplexity (and the file's NLL) for fluent vs not, the thresholds that
  keep 90% / 95% of the fluent paraphrases, and what the paper's thresholds keep and drop;
- ``disagreements``: the pairs on which a measure and the judges disagree most.

Copies of the source are excluded by the caller (:func:`paraamr.validity.run.judged_items`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from paraamr.validity.ceiling import split_half
from paraamr.validity.correlation import correlate, percentile_interval, rank, source_weights
from paraamr.validity.fluency import (
    PAPER_THRESHOLD_NOTE,
    PAPER_THRESHOLDS,
    auc,
    auc_resampled,
    filter_effect,
    keep_threshold,
)
from paraamr.validity.judgements import BUCKETS, Item
from paraamr.validity.measures import DIRECTION, Measures

__all__ = ["analyse", "subsets", "disagreements", "FLUENCY_MEASURES"]

FLUENCY_MEASURES = ("perplexity", "nll")


def subsets(items: Sequence[Item]) -> dict[str, np.ndarray]:
    """Boolean masks: ``all`` and one per source-length bucket present (``"5"``, ``"10"`` ...).

    >>> from paraamr.validity.judgements import Item
    >>> m = subsets([Item("0", "a", "b", 5, "f", 1), Item("1", "c", "d", 40, "f", 2)])
    >>> {k: v.tolist() for k, v in m.items()}
    {'all': [True, True], '5': [True, False], '40': [False, True]}
    """
    b = np.array([it.bucket for it in items])
    out = {"all": np.ones(len(items), dtype=bool)}
    for k in BUCKETS:
        if (b == k).any():
            out[str(k)] = b == k
    extra = sorted(set(b.tolist()) - set(BUCKETS))
    for k in extra:
        out[str(k)] = b == k
    return out


def _meaning(items, measures: Measures, masks, n_boot, n_boot_kendall, seed, methods) -> dict:
    human = np.array([np.nan if it.meaning is None else it.meaning for it in items])
    src = np.array([it.source_id for it in items], dtype=object)
    out: dict = {}
    for name, mask in masks.items():
        # Kendall is recomputed resample by resample (slow): intervals for "all" only
        n_for = {"kendall": n_boot_kendall if name == "all" else 0}
        idx = np.flatnonzero(mask & np.isfinite(human))
        weights = source_weights(src[idx], max(n_boot, n_boot_kendall), seed)
        for m, vals in measures.values.items():
            if not np.isfinite(vals[idx]).any():
                continue
            out.setdefault(m, {})[name] = {
                meth: correlate(
                    vals[idx],
                    human[idx],
                    src[idx],
                    meth,
                    weights=weights[: n_for.get(meth, n_boot)],
                ).to_json()
                for meth in methods
            }
    return out


def _ceiling(items, masks, n_splits, seed, methods) -> dict:
    out: dict = {}
    for name, mask in masks.items():
        lists = [it.meanings for it, keep in zip(items, mask, strict=True) if keep]
        out[name] = {m: split_half(lists, n_splits, seed, m).to_json() for m in methods}
    return out


def _auc_with_ci(score, fluent, src, n_boot, seed) -> dict:
    ok = np.isfinite(score)
    score, fluent, src = score[ok], fluent[ok], src[ok]
    lo, hi = percentile_interval(auc_resampled(score, fluent, source_weights(src, n_boot, seed)))
    return {
        "auc": auc(score, fluent),
        "lo": lo,
        "hi": hi,
        "n_fluent": int(fluent.sum()),
        "n_not_fluent": int((~fluent).sum()),
        "n_resamples": n_boot,
    }


def _fluency(items, measures: Measures, masks, n_boot, seed, keeps, paper) -> dict:
    cls = np.array([-1 if it.fluency_class is None else it.fluency_class for it in items])
    has = cls >= 0
    fluent = cls == 2
    src = np.array([it.source_id for it in items], dtype=object)
    out: dict = {
        "definition": "fluent = a strict majority of the judges gave gm 2 (lower median of the "
        "judges' gm is 2); positive class; score = -measure",
        "class_counts": {str(k): int(v) for k, v in sorted(Counter(cls[has].tolist()).items())},
        "auc": {},
    }
    for m in FLUENCY_MEASURES:
        v = measures.values[m]
        if not np.isfinite(v[has]).any():
            continue
        out["auc"][m] = {
            name: _auc_with_ci(-v[mask & has], fluent[mask & has], src[mask & has], n_boot, seed)
            for name, mask in masks.items()
        }
    # judgement level: every judgement's gm against its paraphrase's perplexity
    ppl = measures.values["perplexity"]
    if np.isfinite(ppl[has]).any():
        jv = np.array([ppl[k] for k, it in enumerate(items) for _ in it.fluencies])
        jy = np.array([f == 2 for it in items for f in it.fluencies])
        out["auc_judgement_level"] = {"perplexity": auc(-jv, jy), "n_judgements": int(jy.size)}
        p, y = ppl[has], fluent[has]
        out["perplexity_median_by_class"] = {
            str(k): float(np.nanmedian(p[cls[has] == k])) for k in sorted(set(cls[has].tolist()))
        }
        if measures.source_perplexity:
            out["source_perplexity_median"] = float(
                np.nanmedian(list(measures.source_perplexity.values()))
            )
        out["keep_thresholds"] = []
        for k in keeps:
            t = keep_threshold(p[y], k)
            out["keep_thresholds"].append({"keep": k, **filter_effect(p, y, t).to_json()})
        out["keep_thresholds_by_bucket"] = {
            name: {str(k): keep_threshold(ppl[mask & has & fluent], k) for k in keeps}
            for name, mask in masks.items()
            if name != "all"
        }
        out["paper_thresholds"] = [
            filter_effect(p, y, t, note="GPT-2 units").to_json() for t in paper
        ]
        out["paper_thresholds_note"] = PAPER_THRESHOLD_NOTE
    return out


def disagreements(
    items: Sequence[Item], values: np.ndarray, target: np.ndarray, direction: int, k: int = 3
) -> dict[str, list[dict]]:
    """The ``k`` pairs the measure rates far better than the judges (``measure_high``) and far
    worse (``measure_low``): largest gaps between the two percentile ranks, measure oriented so
    that higher = closer (``direction``).

    >>> from paraamr.validity.judgements import Item
    >>> its = [Item(str(i), "s", f"p{i}", 5, "f", i) for i in range(4)]
    >>> d = disagreements(its, np.array([1., 2., 3., 4.]), np.array([4., 3., 2., 1.]), 1, 1)
    >>> d["measure_high"][0]["paraphrase"], d["measure_low"][0]["paraphrase"]
    ('p3', 'p0')
    """
    ok = np.flatnonzero(np.isfinite(values) & np.isfinite(target))
    if ok.size == 0:
        return {"measure_high": [], "measure_low": []}
    pm = rank(direction * values[ok]) / ok.size
    ph = rank(target[ok]) / ok.size
    gap = pm - ph
    order = np.argsort(-gap, kind="mergesort")

    def row(j: int) -> dict:
        it = items[ok[j]]
        return {
            "source": it.source,
            "paraphrase": it.paraphrase,
            "value": float(values[ok[j]]),
            "human": float(target[ok[j]]),
            "measure_pct": round(float(pm[j]), 3),
            "human_pct": round(float(ph[j]), 3),
            "where": f"{it.path}:{it.line}",
        }

    return {
        "measure_high": [row(j) for j in order[:k]],
        "measure_low": [row(j) for j in order[::-1][:k]],
    }


def analyse(
    items: Sequence[Item],
    measures: Measures,
    *,
    n_boot: int = 1000,
    n_boot_kendall: int = 200,
    n_splits: int = 100,
    seed: int = 0,
    methods: Sequence[str] = ("spearman", "kendall"),
    keeps: Sequence[float] = (0.90, 0.95),
    paper_thresholds: Sequence[float] = PAPER_THRESHOLDS,
    n_examples: int = 3,
) -> dict:
    """All numbers of the report for ``items`` (copies already excluded)."""
    masks = subsets(items)
    human = np.array([np.nan if it.meaning is None else it.meaning for it in items])
    fluent_share = np.array(
        [np.nan if it.fluent is None else float(it.fluent) for it in items], dtype=np.float64
    )
    examples = {
        m: disagreements(items, measures.values[m], human, DIRECTION[m], n_examples)
        for m in measures.values
        if m not in FLUENCY_MEASURES and np.isfinite(measures.values[m]).any()
    }
    if np.isfinite(measures.values["perplexity"]).any():
        gm_mean = np.array(
            [np.mean(it.fluencies) if it.fluencies else np.nan for it in items], dtype=np.float64
        )
        examples["perplexity_vs_fluency"] = disagreements(
            items, measures.values["perplexity"], gm_mean, -1, n_examples
        )
    return {
        "n_items": len(items),
        "n_items_with_meaning": int(np.isfinite(human).sum()),
        "n_items_with_fluency": int(np.isfinite(fluent_share).sum()),
        "subset_sizes": {k: int(v.sum()) for k, v in masks.items()},
        "human_meaning": {
            "mean": float(np.nanmean(human)),
            "sd": float(np.nanstd(human)),
        },
        "meaning": _meaning(items, measures, masks, n_boot, n_boot_kendall, seed, methods),
        "ceiling": _ceiling(items, masks, n_splits, seed, methods),
        "fluency": _fluency(items, measures, masks, n_boot, seed, keeps, paper_thresholds),
        "disagreements": examples,
        "settings": {
            "n_boot": n_boot,
            "n_boot_kendall": n_boot_kendall,
            "n_splits": n_splits,
            "seed": seed,
            "methods": list(methods),
            "ci": "95% percentile bootstrap, resampling sources",
        },
    }
