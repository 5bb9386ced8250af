"""The perplexity and similarity filters, with one meaning everywhere (builder output, SimCSE,
SCPN, few-shot).

A paraphrase passes ``max_perplexity`` when it carries a perplexity ``<= max_perplexity``. One
*without* a perplexity does not pass: it is dropped and counted as ``dropped_no_perplexity`` (a
corpus with no perplexities at all under a threshold is the caller's error to report).
``max_perplexity=None`` keeps everything. The paper's thresholds are in GPT-2 units: 120 for the
released corpus, 110 for SimCSE and few-shot augmentation, 85 for SCPN.

>>> stats = Counter()
>>> [passes_perplexity(p, 110, stats) for p in (50.0, 110.0, 300.0, None)]
[True, True, False, False]
>>> dict(stats)
{'dropped_perplexity': 1, 'dropped_no_perplexity': 1}
>>> rows = [{"text": "a b", "paraphrases": [{"para_text": "b a", "perplexity": 50.0},
...                                        {"para_text": "a", "perplexity": 300.0}]}]
>>> [len(r["paraphrases"]) for r in filter_by_perplexity(rows, 120)]
[1]

A paraphrase passes ``min_similarity`` (a cosine to its source, the builder's ``similarity``
field) when its similarity is ``>= min_similarity``; one without a similarity (or a NaN) is
dropped and counted as ``dropped_no_similarity``.

>>> stats = Counter()
>>> [passes_similarity(s, 0.6, stats) for s in (0.9, 0.6, 0.2, None, float("nan"))]
[True, True, False, False, False]
>>> dict(stats)
{'dropped_similarity': 1, 'dropped_no_similarity': 2}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = [
    "passes_perplexity",
    "passes_similarity",
    "filter_by_perplexity",
    "filter_paraphrases",
    "similarity_floor",
    "ACCEPTABLE",
]

#: the ``min_similarity`` setting that means the calibrated acceptable similarity
ACCEPTABLE = "acceptable"


def similarity_floor(value: object, what: str = "filter.min_similarity") -> float | str | None:
    """A ``min_similarity`` setting checked: ``None``, a cosine in [-1, 1], or
    :data:`ACCEPTABLE`; anything else is a :class:`~paraamr.errors.ConfigError` naming
    ``what`` (a percentage such as 60 is the usual slip: Table 2 prints similarity in percent).

    >>> similarity_floor("0.6"), similarity_floor(None), similarity_floor("acceptable")
    (0.6, None, 'acceptable')
    >>> similarity_floor(60, "x")
    Traceback (most recent call last):
    paraamr.errors.ConfigError: x=60 is no cosine (between -1 and 1; 0.6, not 60) nor 'acceptable'
    """
    from paraamr.errors import ConfigError

    if value is None or value == ACCEPTABLE:
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = None
    if x is None or not -1.0 <= x <= 1.0:
        hint = f"; {x / 100:g}, not {value}" if x is not None and 1 < x <= 100 else ""
        raise ConfigError(
            f"{what}={value} is no cosine (between -1 and 1{hint}) nor {ACCEPTABLE!r}"
        )
    return x


def passes_perplexity(
    perplexity: float | None, max_perplexity: float | None, stats: Counter | None = None
) -> bool:
    """Whether one paraphrase passes; failures are counted in ``stats`` by reason."""
    if max_perplexity is None:
        return True
    if perplexity is None:
        if stats is not None:
            stats["dropped_no_perplexity"] += 1
        return False
    if perplexity > max_perplexity:
        if stats is not None:
            stats["dropped_perplexity"] += 1
        return False
    return True


def passes_similarity(
    similarity: float | None, min_similarity: float | None, stats: Counter | None = None
) -> bool:
    """Whether one paraphrase passes the similarity filter; failures are counted in ``stats``."""
    if min_similarity is None:
        return True
    if similarity is None or similarity != similarity:  # missing or NaN
        if stats is not None:
            stats["dropped_no_similarity"] += 1
        return False
    if similarity < min_similarity:
        if stats is not None:
            stats["dropped_similarity"] += 1
        return False
    return True


def filter_by_perplexity(
    records: Iterable[dict], max_perplexity: float | None, stats: Counter | None = None
) -> Iterator[dict]:
    """Release-format records (``{"text", "paraphrases": [{"para_text", "perplexity"}]}``) with
    only the paraphrases that pass; sources left with none are dropped (``dropped_sources``)."""
    return filter_paraphrases(records, max_perplexity=max_perplexity, stats=stats)


def filter_paraphrases(
    records: Iterable[dict],
    *,
    max_perplexity: float | None = None,
    min_similarity: float | None = None,
    stats: Counter | None = None,
) -> Iterator[dict]:
    """Release-format records with only the paraphrases that pass both filters (a paraphrase
    failing both is counted once, under perplexity); sources left with none are dropped
    (``dropped_sources``).

    >>> rows = [{"text": "a b", "paraphrases": [{"para_text": "b a", "similarity": 0.8},
    ...                                        {"para_text": "c", "similarity": 0.1}]}]
    >>> [r["paraphrases"] for r in filter_paraphrases(rows, min_similarity=0.5)]
    [[{'para_text': 'b a', 'similarity': 0.8}]]
    """
    for r in records:
        kept = [
            p
            for p in r["paraphrases"]
            if passes_perplexity(p.get("perplexity"), max_perplexity, stats)
            and passes_similarity(p.get("similarity"), min_similarity, stats)
        ]
        if kept:
            yield {**r, "paraphrases": kept}
        elif stats is not None:
            stats["dropped_sources"] += 1
