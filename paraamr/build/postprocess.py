"""Post-processing of generated paraphrases (paper: lowercased, de-duplicated, paraphrases equal
to the source dropped).

>>> postprocess("He left.", ["He left.", "he went away.", "He went away.", " "], lowercase=True)
(['he went away.'], {'identical': 1, 'duplicate': 1, 'empty': 1})
"""

from __future__ import annotations

from collections import Counter

from paraamr.corpus.records import normalize_key

__all__ = ["postprocess"]


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
    kept: list[str] = []
    seen: set[str] = set()
    dropped: Counter = Counter()
    src_key = normalize_key(source, lowercase=True)
    for c in candidates:
        text = " ".join((c or "").split())
        if not text:
            dropped["empty"] += 1
            continue
        if lowercase:
            text = text.lower()
        key = normalize_key(text, lowercase=True)
        if drop_identical and key == src_key:
            dropped["identical"] += 1
            continue
        if dedupe and key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        kept.append(text)
    return kept, dict(dropped)
