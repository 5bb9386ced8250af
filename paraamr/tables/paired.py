"""Two corpora of one Table 2 run compared source by source.

Table 2 gives each corpus a mean over its sources with an interval; whether corpus A is more
diverse than corpus B *on the same sources* is a paired question: for every source both corpora
have, the difference of their per-source means (``OUT/shards/<name>/*.sources.jsonl``, what
Table 2 averages), then the mean difference over those sources with a percentile bootstrap
interval that resamples sources (:func:`paraamr.metrics.aggregate.bootstrap_ci`). Two corpora
that share much of their error (the same parser, the same sources) get a much narrower interval
this way than from the two rows' own intervals.

    paraamr paired results/built/table2-paranmt-small ParaAMR-built ParaAMR-built-no-refocus
    paraamr paired … --words 25:   # only the sources of 25 words or more (--words 0:10: under 10)

>>> d = paired_differences({"a": {"ted3": 5.0}, "b": {"ted3": 3.0}},
...                        {"a": {"ted3": 4.0}, "b": {"ted3": 3.0}, "c": {"ted3": 9.0}},
...                        metrics=("ted3",), bootstrap=0)
>>> d["ted3"]["n"], d["ted3"]["a"], d["ted3"]["b"], d["ted3"]["difference"]
(2, 4.0, 3.5, 0.5)
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from paraamr.diversity.scoring import METRICS, SOURCE_METRICS
from paraamr.errors import DataNotFoundError, InputError
from paraamr.metrics.aggregate import bootstrap_ci
from paraamr.shards import merged_rows
from paraamr.tables.table2 import PERCENT

__all__ = ["source_rows", "paired_differences", "compare_corpora", "render_paired", "in_band"]


def source_rows(out_dir: str | os.PathLike, name: str, lowercase: bool = False) -> dict[str, dict]:
    """``{source: per-source row}`` of one corpus of a Table 2 run (every finished shard);
    ``lowercase``: key by the lowercased source (the run's ``lowercase_keys``). A source twice
    in one corpus is an :class:`~paraamr.errors.InputError`."""
    root = Path(out_dir) / "shards" / name
    if not root.is_dir():
        raise DataNotFoundError(f"{root}: no such corpus in this Table 2 run (its shards go "
                                "to OUT/shards/<name>)")  # fmt: skip
    rows: dict[str, dict] = {}
    for r in merged_rows(root, "sources", order_key="source_id"):
        key = r["source"].lower() if lowercase else r["source"]
        if key in rows:
            raise InputError(f"{root}: source {key!r} is there twice")
        rows[key] = r
    return rows


def paired_differences(
    a: Mapping[str, Mapping[str, float | None]],
    b: Mapping[str, Mapping[str, float | None]],
    metrics: Sequence[str] = (*METRICS, *SOURCE_METRICS),
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, dict]:
    """Per metric, over the sources where both ``a`` and ``b`` have a finite value: ``n``,
    the means of ``a`` and ``b``, the mean ``difference`` (a − b) and its 95% bootstrap
    interval ``ci95`` (``None`` with ``bootstrap=0``), all in Table 2's units (percent for
    :data:`paraamr.tables.table2.PERCENT`).
    Self-BLEU counts only where both have two paraphrases or more (``n_pairs``; one paraphrase
    has no Self-BLEU). A metric with no such source is left out."""
    out: dict[str, dict] = {}
    common = [s for s in a if s in b]
    for m in metrics:
        both = [s for s in common if m not in SOURCE_METRICS
                or min(a[s].get("n_pairs", 0), b[s].get("n_pairs", 0)) >= 2]  # fmt: skip
        pairs = [(a[s].get(m), b[s].get(m)) for s in both]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None
                 and math.isfinite(x) and math.isfinite(y)]  # fmt: skip
        if not pairs:
            continue
        k = 100.0 if m in PERCENT else 1.0
        x, y = (np.array(v, dtype=np.float64) * k for v in zip(*pairs, strict=True))
        d = x - y
        ci = bootstrap_ci(d, bootstrap, seed=seed) if bootstrap else None
        out[m] = {"n": len(d), "a": round(float(x.mean()), 4), "b": round(float(y.mean()), 4),
                  "difference": round(float(d.mean()), 4),
                  "ci95": None if ci is None else [round(ci[0], 4), round(ci[1], 4)]}  # fmt: skip
    return out


def in_band(source: str, words: tuple[int, int | None] | None) -> bool:
    """Whether ``source`` has ``lo <= n < hi`` whitespace words (``hi`` ``None``: no upper
    bound; ``words`` ``None``: every source).

    >>> in_band("I am here .", (4, 10)), in_band("I am here .", (0, 4)), in_band("a", None)
    (True, False, True)
    """
    if words is None:
        return True
    lo, hi = words
    n = len(source.split())
    return lo <= n and (hi is None or n < hi)


def compare_corpora(out_dir: str | os.PathLike, a: str, b: str, *, lowercase: bool = False,
                    bootstrap: int = 1000, seed: int = 0,
                    words: tuple[int, int | None] | None = None) -> dict:  # fmt: skip
    """:func:`paired_differences` of corpora ``a`` and ``b`` of the Table 2 run in
    ``out_dir``, with how many sources each has and how many they share; ``words``:
    only the sources of ``lo <= words < hi`` (:func:`in_band`)."""
    ra, rb = source_rows(out_dir, a, lowercase), source_rows(out_dir, b, lowercase)
    ra = {s: r for s, r in ra.items() if in_band(s, words)}
    rb = {s: r for s, r in rb.items() if in_band(s, words)}
    shared = sum(s in rb for s in ra)
    if not shared:
        raise InputError(f"{out_dir}: {a} and {b} share no source"
                         + ("" if words is None else f" of {_band(words)} words")
                         + ("" if lowercase else " (lowercase keys?)"))  # fmt: skip
    return {"run": str(out_dir), "a": a, "b": b, "sources_a": len(ra), "sources_b": len(rb),
            "shared": shared, "bootstrap": bootstrap, "seed": seed,
            **({"words": list(words)} if words is not None else {}),
            "metrics": paired_differences(ra, rb, bootstrap=bootstrap, seed=seed)}  # fmt: skip


def _band(words: Sequence[int | None]) -> str:
    lo, hi = words
    return f"{lo} or more" if hi is None else f"{lo} to {hi - 1}"


def render_paired(result: Mapping) -> str:
    """A markdown table of :func:`compare_corpora`'s result."""
    a, b = result["a"], result["b"]
    band = f" of {_band(result['words'])} words" if result.get("words") else ""
    lines = [f"{a} − {b}, per source over the {result['shared']} sources{band} both have "
             f"({result['bootstrap']} bootstrap resamples of the sources):", "",
             f"| metric | sources | {a} | {b} | difference [95% CI] |",
             "|---|---|---|---|---|"]  # fmt: skip
    for m, r in result["metrics"].items():
        ci = "" if r["ci95"] is None else f" [{r['ci95'][0]:+.2f}, {r['ci95'][1]:+.2f}]"
        lines.append(f"| {m} | {r['n']} | {r['a']:.2f} | {r['b']:.2f} | "
                     f"{r['difference']:+.2f}{ci} |")  # fmt: skip
    return "\n".join(lines) + "\n"
