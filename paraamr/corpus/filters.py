"""The perplexity filter, with one meaning everywhere (builder output, SimCSE, SCPN, few-shot).

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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["passes_perplexity", "filter_by_perplexity"]


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


def filter_by_perplexity(
    records: Iterable[dict], max_perplexity: float | None, stats: Counter | None = None
) -> Iterator[dict]:
    """Release-format records (``{"text", "paraphrases": [{"para_text", "perplexity"}]}``) with
    only the paraphrases that pass; sources left with none are dropped (``dropped_sources``)."""
    for r in records:
        kept = [
            p
            for p in r["paraphrases"]
            if passes_perplexity(p.get("perplexity"), max_perplexity, stats)
        ]
        if kept:
            yield {**r, "paraphrases": kept}
        elif stats is not None:
            stats["dropped_sources"] += 1
