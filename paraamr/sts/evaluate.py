"""STS evaluation as SentEval / SimCSE report it: cosine similarity, "all" setting, ×100.

For each set (an STS year, STS-B, SICK-R) the pairs of all its subsets are concatenated and one
Pearson and one Spearman correlation are computed over the concatenation (SentEval's
``results[task]["all"]``, which SimCSE's table reports), not the mean over subsets. ``avg`` is the
mean over STS12-16 (what the ParaAMR paper reports); ``avg_7`` adds STS-B and SICK-R (SimCSE's
"Avg." column) when both are present.

Usage (the SimCSE trainer, or ``python experiments/sts.py``)::

    suite = load_sts_suite(resolve_data_dir(None))           # STS12-16 + STS-B dev + SICK-R
    res = evaluate_sts(model, suite)                         # any SentenceTransformer
    res["years"]["STS12"]["spearman"], res["avg"]["spearman"]
    sts_signature("minilm", suite)
"""

from __future__ import annotations

import json
import logging
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from paraamr.markdown import markdown_grid
from paraamr.signature import Signature, package_versions, versions_field
from paraamr.sts.readers import SICKR, STS_YEARS, StsSet
from paraamr.utils import write_text_atomic

__all__ = [
    "METRIC",
    "evaluate_sts",
    "correlations",
    "sts_signature",
    "markdown_table",
    "run_sts",
]

log = logging.getLogger(__name__)

METRIC = "spearman-all-setting, cosine"


def correlations(sims: np.ndarray, gold: np.ndarray) -> dict[str, float | int]:
    """Pearson and Spearman ×100 (scipy.stats) and the number of pairs.

    NaN when undefined (fewer than 2 pairs or a constant input).

    >>> correlations(np.array([0.1, 0.5, 0.4]), np.array([1.0, 5.0, 4.0]))["spearman"]
    100.0
    """
    sims = np.asarray(sims, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    n = len(gold)
    if n < 2 or np.ptp(sims) == 0 or np.ptp(gold) == 0:
        return {"pearson": float("nan"), "spearman": float("nan"), "n": n}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        p = float(stats.pearsonr(sims, gold)[0]) * 100
        s = float(stats.spearmanr(sims, gold)[0]) * 100
    return {"pearson": p, "spearman": s, "n": n}


def _mean(entries: Sequence[Mapping[str, float]], tasks: Sequence[str]) -> dict:
    return {
        "pearson": float(np.mean([e["pearson"] for e in entries])),
        "spearman": float(np.mean([e["spearman"] for e in entries])),
        "tasks": list(tasks),
    }


def evaluate_sts(
    model, suite: Mapping[str, StsSet], batch_size: int = 128, progress: bool = False
) -> dict:
    """Cosine-similarity STS evaluation of ``model`` on ``suite`` (SentEval "all" setting).

    Every distinct sentence of the whole suite is encoded once (one ``encode`` call).

    Args:
        model: anything with sentence-transformers' ``encode(sentences, batch_size=...,
            convert_to_numpy=True, normalize_embeddings=...)``.
        suite: set name -> :class:`StsSet`, e.g. from ``load_sts_suite``.
        batch_size: passed to ``encode``.
        progress: the encoder's progress bar over the batches (sentence-transformers' tqdm:
            total and ETA), for the full suite of a large model.

    Returns:
        ``{"years": {name: {"pearson", "spearman", "n"}}, "subsets": {name: {task: {...}}},
        "avg": {"pearson", "spearman", "tasks"}, "avg_7": {...}, "n_sentences", "metric"}``.
        Correlations are ×100. ``years`` holds every set of the suite (STS-B and SICK-R under
        their names); ``avg`` averages the STS12-16 present (absent when none is), ``avg_7``
        is only there when all 5 STS years, an STS-B set and SICK-R are present.

    >>> from paraamr.sts.readers import StsSet
    >>> class Fake:
    ...     def encode(self, xs, batch_size=128, convert_to_numpy=True, normalize_embeddings=True):
    ...         return np.array([[len(x), 1.0] for x in xs])
    >>> s = StsSet("STS12", {"t": (["a", "bb", "a"], ["a", "a", "ccc"], np.array([5.0, 3, 1]))}, "")
    >>> r = evaluate_sts(Fake(), {"STS12": s})
    >>> r["years"]["STS12"]["spearman"], r["avg"]["tasks"], "avg_7" in r
    (100.0, ['STS12'], False)
    """
    from paraamr.metrics.semantic import embed_unique

    sentences = (s for sset in suite.values() for s in sset.sentences())
    t0 = time.perf_counter()
    # float64 cosines: ties do not hinge on rounding
    index, emb = embed_unique(list(sentences), model, batch_size, progress, dtype=np.float64)
    log.info("encoded %d distinct sentences in %.1fs", len(index), time.perf_counter() - t0)

    years: dict[str, dict] = {}
    subsets: dict[str, dict] = {}
    for name, sset in suite.items():
        all_sims, all_gold = [], []
        subsets[name] = {}
        for task, (s1, s2, gold) in sset.subsets.items():
            ia = np.fromiter((index[s] for s in s1), dtype=np.int64, count=len(s1))
            ib = np.fromiter((index[s] for s in s2), dtype=np.int64, count=len(s2))
            sims = np.einsum("ij,ij->i", emb[ia], emb[ib]) if len(ia) else np.zeros(0)
            subsets[name][task] = correlations(sims, gold)
            all_sims.append(sims)
            all_gold.append(np.asarray(gold, dtype=np.float64))
        years[name] = correlations(
            np.concatenate(all_sims) if all_sims else np.zeros(0),
            np.concatenate(all_gold) if all_gold else np.zeros(0),
        )
        if sset.skipped:
            years[name]["skipped"] = sset.skipped

    out: dict = {"years": years, "subsets": subsets}
    sts = [y for y in STS_YEARS if y in years]
    if sts:
        if len(sts) < len(STS_YEARS):
            log.warning("avg over %s only (not all of STS12-16)", sts)
        out["avg"] = _mean([years[y] for y in sts], sts)
    stsb = [n for n in years if n.startswith("STSBenchmark")]
    if len(sts) == len(STS_YEARS) and stsb and SICKR in years:
        seven = [*sts, stsb[0], SICKR]
        out["avg_7"] = _mean([years[n] for n in seven], seven)
    out["n_sentences"] = len(index)
    out["metric"] = METRIC
    return out


def _data_label(suite: Mapping[str, StsSet]) -> str:
    parts: dict[str, list[str]] = {}
    for name, s in suite.items():
        parts.setdefault(s.layout or "?", []).append(name)
    return ";".join(f"{layout}={'+'.join(names)}" for layout, names in parts.items())


def sts_signature(model_name: str, suite: Mapping[str, StsSet]) -> Signature:
    """sacrebleu-style line naming the model, data layout/sets and metric.

    >>> from paraamr.sts.readers import StsSet
    >>> s = StsSet("STS12", {}, "x", layout="senteval")
    >>> sts_signature("minilm", {"STS12": s}).split("|")[1:4]
    ['model:minilm', 'data:senteval=STS12', 'metric:spearman-all-setting,cosine,x100']
    """
    v = package_versions()
    versions = versions_field(("torch", "transformers", "sentence-transformers"))
    return Signature.build(
        ("paraamr", v.get("paraamr", "none")),
        ("model", model_name),
        ("data", _data_label(suite)),
        ("metric", METRIC.replace(", ", ",") + ",x100"),
        ("ws", "split-join"),
        ("versions", versions),
    )


def _fmt(x: float) -> str:
    return "n/a" if x is None or x != x else f"{x:.2f}"


def markdown_table(result: Mapping) -> str:
    """Spearman (and Pearson) per set plus the averages, as a markdown table."""
    years = result["years"]
    cols = list(years)
    for k in ("avg", "avg_7"):
        if k in result:
            cols.append(k)
    rows = {**years, **{k: result[k] for k in ("avg", "avg_7") if k in result}}
    lines = markdown_grid(
        ["", *cols],
        [
            ["Spearman", *(_fmt(rows[c]["spearman"]) for c in cols)],
            ["Pearson", *(_fmt(rows[c]["pearson"]) for c in cols)],
            ["pairs", *(str(years[c]["n"]) if c in years else "" for c in cols)],
        ],
        right=range(1, len(cols) + 1),
    )
    return "\n".join(lines)


def _jsonable(x):
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    return x


def run_sts(
    model: str = "minilm",
    *,
    data_dir: str | os.PathLike | None = None,
    layout: str = "senteval",
    include: Sequence[str] | None = None,
    batch_size: int = 128,
    device: str | None = None,
    out_dir: str | os.PathLike | None = None,
) -> dict:
    """Load the encoder and the suite, evaluate, write ``out_dir/sts.json``; returns the dict.

    ``model``: ``minilm`` (offline), ``simcse``, a hub name or a local model folder
    (``paraamr.metrics.semantic.load_encoder``).
    """
    from paraamr.datadir import data_path
    from paraamr.metrics.semantic import load_encoder
    from paraamr.sts.readers import DEFAULT_INCLUDE, load_sts_suite

    data = Path(".") if layout == "hub" else data_path(data_dir)
    suite = load_sts_suite(data, layout, tuple(include or DEFAULT_INCLUDE))
    t0 = time.perf_counter()
    encoder = load_encoder(model, device)
    res = evaluate_sts(encoder, suite, batch_size, progress=True)
    wall = time.perf_counter() - t0
    out = {
        "model": model,
        "signature": sts_signature(model, suite),
        **res,
        "counts": {
            n: {"pairs": s.n, "skipped": s.skipped, "subsets": s.counts()} for n, s in suite.items()
        },
        "sources": {n: s.source for n, s in suite.items()},
        "layout": layout,
        "wall_s": round(wall, 2),
    }
    out = _jsonable(out)
    if out_dir is not None:
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        write_text_atomic(d / "sts.json", json.dumps(out, indent=2) + "\n")
        log.info("wrote %s", d / "sts.json")
    return out
