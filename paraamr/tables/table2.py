"""Table 2 of the ParaAMR paper: compare paraphrase corpora on the same sources.

Steps: read every corpus (streaming), keep the sources common to all (:mod:`paraamr.corpus.subset`),
optionally take this job's shard and the first ``limit`` sources, score each corpus
(:mod:`paraamr.diversity.scoring`) into ``OUT/shards/<name>/shard-<i>-of-<n>/``, then merge
shards into rows.
"""

from __future__ import annotations

import logging
import math
import os
from array import array
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import read_corpus
from paraamr.corpus.records import SourceRecord
from paraamr.corpus.specs import CorpusSpec
from paraamr.corpus.subset import filter_common, with_new_paraphrase
from paraamr.datadir import DATA_HINT
from paraamr.diversity.scoring import METRICS, SOURCE_METRICS, shard_result
from paraamr.errors import DataNotFoundError
from paraamr.metrics.base import mean_score
from paraamr.metrics.lexical import CorpusBleu
from paraamr.paper import PAPER_TABLE2, PAPER_TABLE2_SOURCES
from paraamr.shards import Shard, merged_rows, shard_states
from paraamr.tables.render import Column, Layout
from paraamr.utils import limited

__all__ = [
    "TABLE2_COLUMNS",
    "TABLE2",
    "table2_layout",
    "default_corpora",
    "shard_of",
    "table2_row",
    "corpus_dir",
    "source_distributions",
    "plot_source_distributions",
    "pair_columns",
    "filtered_row",
    "filtered_name",
    "with_acceptable",
]

log = logging.getLogger(__name__)


#: the keys of every Table 2 row (W&B summaries, JSON rows)
TABLE2_COLUMNS = (
    "dataset",
    "n_sources",
    "n_pairs",
    "similarity",
    "one_minus_bleu",
    "one_minus_iou",
    "ted3",
    "tedf",
    "signature",
)


def _table2_notes(r: dict) -> list[str]:
    notes = []
    ci = {m: r[f"{m}_ci95"] for m in (*METRICS, *SOURCE_METRICS) if f"{m}_ci95" in r}
    if ci:
        notes.append(f"95% bootstrap CI: {ci}")
    if r.get("acceptable_ci95"):
        notes.append(f"acceptable share 95% bootstrap CI: {r['acceptable_ci95']}")
    if r.get("min_similarity") is not None:
        notes.append(
            f"pairs with similarity >= {r['min_similarity']:g} only: "
            f"{r['kept_pairs_share']:.1%} of the pairs, {r['kept_sources_share']:.1%} of the "
            "sources kept (Self-BLEU and corpus BLEU are not recomputed for a filtered row)"
        )
    if r.get("skipped") or r.get("dropped_identical"):
        notes.append(
            f"dropped identical paraphrases: {r.get('dropped_identical', 0)}; "
            f"skipped: {r.get('skipped') or 'none'}"
        )
    return notes


TABLE2 = Layout(
    name="table2",
    title="Table 2",
    columns=(
        Column("dataset", "dataset", fmt="text"),
        Column("n_sources", "#sources", fmt="int"),
        Column("n_pairs", "#pairs", fmt="int"),
        Column("similarity", "similarity"),
        Column("one_minus_bleu", "1−BLEU"),
        Column("one_minus_iou", "1−∩/∪"),
        Column("ted3", "TED-3"),
        Column("tedf", "TED-F"),
    ),
    intro=(
        "Similarity, 1−BLEU and 1−∩/∪ in percent; TED-3 / TED-F in edit operations "
        "(mean over a source's paraphrases, then over sources).",
    ),
    paper=tuple(
        {"dataset": k, "n_sources": PAPER_TABLE2_SOURCES, **v} for k, v in PAPER_TABLE2.items()
    ),
    paper_source="paper (Huang et al. 2023, Table 2)",
    row_notes=_table2_notes,
)


def table2_layout(rows: list[dict]) -> Layout:
    """:data:`TABLE2`, plus a Self-BLEU column when the rows have it (``metrics.self_bleu``)
    and an acceptable-share column when they have that (``acceptable.enabled``)."""
    layout = TABLE2
    if any(r.get("self_bleu") is not None for r in rows):
        layout = replace(
            layout,
            columns=(*layout.columns, Column("self_bleu", "Self-BLEU")),
            intro=(*layout.intro, "Self-BLEU in percent (lower: more diverse)."),
        )
    acc = next((r["acceptable_signature"] for r in rows if r.get("acceptable_signature")), None)
    if acc is not None:
        layout = replace(
            layout,
            columns=(*layout.columns, Column("acceptable", "acceptable")),
            intro=(
                *layout.intro,
                "Acceptable: the percentage of pairs whose similarity is at least the cosine at "
                "which ParaBank-Eval's judges call half of the pairs meaning-preserving "
                f"(paraamr.validity.acceptable; `{acc}`).",
            ),
        )
    return layout


def default_corpora(data_dir: Path) -> list[CorpusSpec]:
    """ParaNMT vs ParaBank-1 on the 400 ParaBank-Eval sources (the offline Table 2 sample)."""
    d = data_dir / "paraphrase" / "parabank-eval"
    if not (d / "candidates.tsv").is_file():
        raise DataNotFoundError(f"{d}/candidates.tsv not found. {DATA_HINT}")
    return [
        CorpusSpec("ParaNMT", str(d), "parabank-eval-paranmt"),
        CorpusSpec("ParaBank1", str(d), "parabank-eval-parabank1"),
    ]


def shard_of(records: Iterable[SourceRecord], shard: int, num_shards: int):
    """Deterministic sharding by position in the (subset) stream: record k goes to k % n.

    Sets ``record.index`` to the global position so source ids stay unique across shards.
    """
    sh = Shard(shard, num_shards)
    for k, r in enumerate(records):
        if sh.owns(k):
            r.index = k
            yield r


def corpus_dir(out_dir: str | os.PathLike, name: str) -> Path:
    """Where the shards of one corpus go: ``OUT/shards/<name>/``."""
    return Path(out_dir) / "shards" / name


def subset_stream(
    spec: CorpusSpec,
    keys,
    skips: SkipLog,
    limit: int | None = None,
    lowercase_keys: bool = False,
):
    """The records of one corpus restricted to the common subset (first ``limit``)."""
    records = with_new_paraphrase(read_corpus(spec.path, spec.fmt, skips))
    return limited(filter_common(records, keys, lowercase_keys), limit)


ALL = (*METRICS, *SOURCE_METRICS)


def _source_values(root: Path) -> dict[str, array]:
    """Each metric's per-source means in input order (NaN for ``None``), 8 bytes per source."""
    values = {m: array("d") for m in ALL}
    for r in merged_rows(root, "sources", order_key="source_id"):
        for m in ALL:
            v = r.get(m)
            values[m].append(math.nan if v is None else v)
    return values


#: the metrics Table 2 shows in percent (the others, TED-3 / TED-F, in edit operations)
PERCENT = ("similarity", "one_minus_bleu", "one_minus_iou", "self_bleu")

#: how each metric's per-source values are shown (axis label, scale to the table's units)
SHOWN = {
    "similarity": ("similarity (%)", 100.0),
    "one_minus_bleu": ("1 − BLEU (%)", 100.0),
    "one_minus_iou": ("1 − ∩/∪ (%)", 100.0),
    "ted3": ("TED-3", 1.0),
    "tedf": ("TED-F", 1.0),
}


def source_distributions(out_dir: str | os.PathLike, names: list[str]) -> dict:
    """Per corpus and metric, the finite per-source values in the table's units (what the
    figure draws): ``{corpus: {metric: [values]}}``."""
    out = {}
    for name in names:
        vals = _source_values(corpus_dir(out_dir, name))
        out[name] = {m: [v * SHOWN[m][1] for v in vals[m] if math.isfinite(v)] for m in SHOWN}
    return out


def plot_source_distributions(
    out_dir: str | os.PathLike, names: list[str], signature: str = ""
) -> list[Path]:
    """``table2_distributions.{png,pdf}``: one panel per metric, a box (median, quartiles,
    1.5 IQR whiskers) and the mean (a diamond, the table's number) per corpus."""
    from paraamr.figures import new_figure, save_figure

    data = source_distributions(out_dir, names)
    fig = new_figure(3.0 * len(SHOWN), 3.2, ncols=len(SHOWN))
    for ax, (m, (label, _)) in zip(fig.axes, SHOWN.items(), strict=True):
        series = [data[n][m] for n in names]
        ax.boxplot(series, showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=20, fontsize=7)
        means = [sum(v) / len(v) if v else math.nan for v in series]
        ax.plot(range(1, len(names) + 1), means, "D", color="C3", markersize=4, label="mean")
        ax.set_title(label, fontsize=9)
    fig.axes[0].legend(fontsize=7)
    return save_figure(fig, Path(out_dir) / "table2_distributions", signature)


#: per-pair columns read back for the acceptable share and the filtered rows
PAIR_COLUMNS = ("source_id", *METRICS)


def pair_columns(out_dir: str | os.PathLike, name: str) -> dict[str, np.ndarray]:
    """One corpus's scored pairs as columns in input order (NaN for ``None``): ``source_id``
    and every metric, 8 bytes per pair and column."""
    cols = {k: array("d") for k in PAIR_COLUMNS}
    for r in merged_rows(corpus_dir(out_dir, name), "pairs", order_key="source_id"):
        for k, col in cols.items():
            v = r.get(k)
            col.append(math.nan if v is None else v)
    return {
        k: np.frombuffer(v, dtype=np.float64) if len(v) else np.empty(0) for k, v in cols.items()
    }


def with_acceptable(
    row: dict, pairs: dict[str, np.ndarray], acceptable, bootstrap: int = 0, seed: int = 0
) -> dict:
    """``row`` with ``acceptable`` (percent of its pairs at or above the calibrated cosine,
    :class:`paraamr.validity.acceptable.AcceptableThreshold`), its interval and signature."""
    from paraamr.validity.acceptable import acceptable_shares

    share, ci = acceptable_shares(
        pairs["similarity"], pairs["source_id"], acceptable.threshold, bootstrap, seed
    )
    row = {**row, "acceptable": None if math.isnan(share) else round(100 * share, 4)}
    if ci is not None:
        row["acceptable_ci95"] = [round(100 * ci[0], 4), round(100 * ci[1], 4)]
    row["acceptable_signature"] = acceptable.signature()
    return row


def filtered_name(name: str, min_similarity: float, label: str | None = None) -> str:
    """The row name of ``name`` filtered at ``min_similarity`` (shown as ``label`` if given).

    >>> filtered_name("ParaNMT", 0.6), filtered_name("ParaNMT", 0.597839, "acceptable")
    ('ParaNMT sim≥0.6', 'ParaNMT sim≥acceptable')
    """
    return f"{name} sim≥{label or format(min_similarity, 'g')}"


def filtered_row(
    row: dict,
    pairs: dict[str, np.ndarray],
    min_similarity: float,
    bootstrap: int = 0,
    seed: int = 0,
    label: str | None = None,
) -> dict:
    """The Table 2 row of ``row``'s corpus keeping only the pairs with similarity
    ``>= min_similarity`` (a cosine): per-source means over the kept pairs, then the mean over
    the sources that keep one, as in :func:`table2_row`; the shares of pairs and sources kept
    are in the row. Self-BLEU and a corpus-level BLEU are not recomputed (left out).

    >>> import numpy as np
    >>> pairs = {"source_id": np.array([0., 0, 1]), "similarity": np.array([.9, .5, .4]),
    ...          **{m: np.array([2., 4, 6]) for m in METRICS if m != "similarity"}}
    >>> r = filtered_row({"dataset": "A", "n_sources": 2, "signature": "s"}, pairs, 0.45)
    >>> r["n_sources"], r["n_pairs"], r["similarity"], r["ted3"], r["kept_sources_share"]
    (1, 2, 70.0, 3.0, 0.5)
    """
    keep = pairs["similarity"] >= min_similarity
    src = pairs["source_id"][keep]
    _, inverse = np.unique(src, return_inverse=True)
    n_src = int(inverse.max()) + 1 if inverse.size else 0
    out = {
        "dataset": filtered_name(row["dataset"], min_similarity, label),
        "n_sources": n_src,
        "n_pairs": int(keep.sum()),
    }
    for m in METRICS:
        v = pairs[m][keep]
        ok = ~np.isnan(v)
        sums = np.bincount(inverse[ok], weights=v[ok], minlength=n_src)
        counts = np.bincount(inverse[ok], minlength=n_src)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_source = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        score = mean_score(m, per_source, bootstrap=bootstrap, seed=seed)
        if m in PERCENT:
            score = score.scaled(100.0)
        out[m] = None if score.value is None else round(score.value, 4)
        if score.interval is not None:
            out[f"{m}_ci95"] = [round(score.interval[0], 4), round(score.interval[1], 4)]
    out["min_similarity"] = float(min_similarity)
    total_pairs = int(pairs["similarity"].size)
    out["kept_pairs_share"] = round(out["n_pairs"] / total_pairs, 6) if total_pairs else 0.0
    n_all = row.get("n_sources") or 0
    out["kept_sources_share"] = round(n_src / n_all, 6) if n_all else 0.0
    out["signature"] = f"{row['signature']}|filter:sim>={min_similarity:g}"
    return out


def table2_row(out_dir: str | os.PathLike, name: str, bootstrap: int = 0, seed: int = 0) -> dict:
    """Join the shards of one corpus into a Table 2 row (percentages like the paper).

    Refuses missing or unfinished shards, mixed shard counts and shards scored with other
    settings (:func:`paraamr.shards.shard_states`); sources are joined in input order, so
    bootstrap intervals equal those of an unsharded run.
    """
    root = corpus_dir(out_dir, name)
    if not root.is_dir():
        raise DataNotFoundError(f"no shards under {root}: run the scoring step first")
    states = shard_states(root)
    results = [shard_result(st) for st in states]
    values = _source_values(root)  # per-metric arrays, not 1M row dicts
    n_pairs = sum(r.n_pairs for r in results)
    dropped = sum(r.dropped_identical for r in results)
    skips: dict[str, int] = {}
    cbleu = CorpusBleu()
    for r in results:
        for k, v in r.skips["by_reason"].items():
            skips[k] = skips.get(k, 0) + v
        cbleu.merge(r.corpus_bleu_stats)
    n_sources = len(values[METRICS[0]])
    # mean over sources (NaN = not scored) with its bootstrap interval, read in place
    summary = {m: mean_score(m, values[m], bootstrap=bootstrap, seed=seed) for m in ALL}
    del values
    row = {"dataset": name, "n_sources": n_sources, "n_pairs": n_pairs}
    for m in ALL:
        score = summary[m]
        if m in SOURCE_METRICS and score.value is None:
            continue  # optional metric that was not computed
        if m == "one_minus_bleu" and score.value is None and cbleu.stats[0]:
            score = replace(score, value=1.0 - cbleu.score())  # corpus-level BLEU variant
        if m in PERCENT:
            score = score.scaled(100.0)
        row[m] = None if score.value is None else round(score.value, 4)
        if score.interval is not None:
            row[f"{m}_ci95"] = [round(score.interval[0], 4), round(score.interval[1], 4)]
    row["dropped_identical"] = dropped
    row["skipped"] = skips
    row["signature"] = results[0].signature
    return row
