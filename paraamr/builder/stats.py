"""Corpus statistics of the paper's Table 1 (rendered by :mod:`paraamr.tables.table1`; the
perplexity filter is :mod:`paraamr.corpus.filters`).

>>> rows = [{"text": "a b c", "paraphrases": [{"para_text": "c b a", "perplexity": 50.0},
...                                          {"para_text": "a c", "perplexity": 300.0}]}]
>>> table1_stats(rows)["avg_paraphrases"]
2.0
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["table1_stats"]


def table1_stats(records: Iterable[dict]) -> dict:
    """#instances (sources), average #paraphrases per source, average length in whitespace words
    of sources and of paraphrases."""
    n = n_para = src_words = para_words = 0
    for r in records:
        n += 1
        src_words += len(r["text"].split())
        for p in r["paraphrases"]:
            n_para += 1
            para_words += len(p["para_text"].split())
    return {
        "instances": n,
        "avg_paraphrases": n_para / n if n else 0.0,
        "avg_source_length": src_words / n if n else 0.0,
        "avg_paraphrase_length": para_words / n_para if n_para else 0.0,
    }
