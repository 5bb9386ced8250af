"""A persistent per-sentence perplexity cache around any scorer.

Perplexity is the slow part of scoring judged paraphrases (a 135M-parameter LM on CPU), so
:class:`CachedScorer` keeps every computed value in a JSON-lines file named after the scorer's
signature: a rerun (other bootstrap settings, another report) or a run interrupted half-way
scores only what is missing. Values are appended after each chunk, so a crash loses at most
one chunk; a truncated last line is skipped and counted.

>>> import tempfile
>>> class Len:
...     calls = 0
...     def signature(self): return "len"
...     def perplexities(self, xs, batch_size=None):
...         Len.calls += len(xs); return [float(len(x)) for x in xs]
>>> d = tempfile.mkdtemp()
>>> CachedScorer(Len(), d).perplexities(["ab", "c"])
[2.0, 1.0]
>>> CachedScorer(Len(), d).perplexities(["c", "def"]), Len.calls
([1.0, 3.0], 3)
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

from paraamr.jsonl_cache import JsonlCache

__all__ = ["CachedScorer"]

log = logging.getLogger(__name__)


class CachedScorer:
    """Wrap ``scorer`` (``perplexities(sentences, batch_size)`` + ``signature()``) with a cache.

    Args:
        scorer: the real scorer.
        cache_dir: folder of the cache files (one per scorer signature).
        chunk_size: sentences scored between two appends to the cache (and progress lines).
    """

    def __init__(self, scorer, cache_dir: str | os.PathLike, chunk_size: int = 256):
        self.scorer, self.chunk_size = scorer, chunk_size
        sig = scorer.signature()
        digest = hashlib.sha1(sig.encode("utf-8")).hexdigest()[:16]
        self.path = Path(cache_dir) / f"ppl-{digest}.jsonl"
        self.file = JsonlCache(self.path, sig)
        self.values: dict[str, float] = {}
        self.n_cached = self.n_scored = 0
        for row in self.file.rows():
            try:
                v = row["ppl"]
                self.values[row["s"]] = float("nan") if v is None else float(v)
            except (KeyError, TypeError, ValueError):
                self.file.n_bad_lines += 1
        self.n_bad_lines = self.file.n_bad_lines

    def signature(self) -> str:
        return self.scorer.signature()

    def perplexities(self, sentences: Sequence[str], batch_size: int | None = None) -> list[float]:
        missing = sorted({s for s in sentences if s not in self.values}, key=lambda s: (-len(s), s))
        self.n_cached += len(set(sentences)) - len(missing)
        if missing:
            t0 = time.perf_counter()
            kw = {} if batch_size is None else {"batch_size": batch_size}
            for start in range(0, len(missing), self.chunk_size):
                chunk = missing[start : start + self.chunk_size]
                scores = self.scorer.perplexities(chunk, **kw)
                self.values.update(zip(chunk, scores, strict=True))
                self.file.append(
                    {"s": s, "ppl": v if math.isfinite(v) else None}
                    for s, v in zip(chunk, scores, strict=True)
                )
                done = start + len(chunk)
                rate = done / (time.perf_counter() - t0)
                log.info(
                    "perplexity %d/%d sentences (%.2f/s, ~%.0f s left)",
                    done,
                    len(missing),
                    rate,
                    (len(missing) - done) / rate,
                )
            self.n_scored += len(missing)
        return [self.values[s] for s in sentences]
