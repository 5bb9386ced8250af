"""Corpus statistics in the layout of the paper's Table 1 (the perplexity filter is
:mod:`paraamr.corpus.filters`).

>>> rows = [{"text": "a b c", "paraphrases": [{"para_text": "c b a", "perplexity": 50.0},
...                                          {"para_text": "a c", "perplexity": 300.0}]}]
>>> table1_stats(rows)["avg_paraphrases"]
2.0
"""

from __future__ import annotations

from collections.abc import Iterable

from paraamr.paper import PAPER_TABLE1

__all__ = ["table1_stats", "render_table1"]


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


def render_table1(name: str, stats: dict, note: str) -> str:
    lines = [
        f"# Table 1 layout: {note}",
        "",
        "| dataset | #instances | avg #paraphrases | avg length (paraphrase) | source |",
        "|---|---|---|---|---|",
        f"| {name} | {stats['instances']:,} | {stats['avg_paraphrases']:.2f} | "
        f"{stats['avg_paraphrase_length']:.2f} | ours |",
    ]
    for k, (n, a, length) in PAPER_TABLE1.items():
        lines.append(f"| {k} | {n:,} | {a:.2f} | {length:.2f} | paper |")
    return "\n".join(lines) + "\n"
