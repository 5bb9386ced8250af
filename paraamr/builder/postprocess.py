"""Post-processing of generated paraphrases (paper: lowercased, de-duplicated, paraphrases equal
to the source dropped).

>>> postprocess("He left.", ["He left.", "he went away.", "He went away.", " "], lowercase=True)
(['he went away.'], {'identical': 1, 'duplicate': 1, 'empty': 1})
"""

from __future__ import annotations

from collections import Counter

from paraamr.corpus.records import normalize_key, same_sentence

__all__ = ["postprocess", "postprocess_indexed"]


def postprocess_indexed(
    source: str,
    candidates: list[str],
    *,
    lowercase: bool = True,
    dedupe: bool = True,
    drop_identical: bool = True,
) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """Like :func:`postprocess`, but each kept text comes with the index of the candidate that
    produced it (so callers can keep what went with it, e.g. its focus and graph).

    >>> postprocess_indexed("a", ["b", "B", "c"])
    ([(0, 'b'), (2, 'c')], {'duplicate': 1})
    """
    kept: list[tuple[int, str]] = []
    seen: set[str] = set()
    dropped: Counter = Counter()
    for i, c in enumerate(candidates):
        text = " ".join((c or "").split())
        if not text:
            dropped["empty"] += 1
            continue
        if lowercase:
            text = text.lower()
        if drop_identical and same_sentence(text, source):
            dropped["identical"] += 1
            continue
        key = normalize_key(text, lowercase=True)
        if dedupe and key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        kept.append((i, text))
    return kept, dict(dropped)


def postprocess(
    source: str,
    candidates: list[str],
    *,
    lowercase: bool = True,
    dedupe: bool = True,
    drop_identical: bool = True,
) -> tuple[list[str], dict[str, int]]:
    """Clean one source's candidates; returns (kept, counts of what was dropped and why).

    Order is kept (first occurrence wins), so the output is deterministic.
    """
    kept, dropped = postprocess_indexed(
        source, candidates, lowercase=lowercase, dedupe=dedupe, drop_identical=drop_identical
    )
    return [t for _, t in kept], dropped
