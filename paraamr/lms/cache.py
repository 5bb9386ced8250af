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
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

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
        self.values: dict[str, float] = {}
        self.n_bad_lines = 0
        self.n_cached = self.n_scored = 0
        if self.path.is_file():
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        if "signature" in row:
                            continue
                        v = row["ppl"]
                        self.values[row["s"]] = float("nan") if v is None else float(v)
                    except (ValueError, KeyError, TypeError):
                        self.n_bad_lines += 1
            if self.n_bad_lines:
                log.warning("%s: %d unreadable lines skipped", self.path, self.n_bad_lines)

    def signature(self) -> str:
        return self.scorer.signature()

    def perplexities(self, sentences: Sequence[str], batch_size: int | None = None) -> list[float]:
        missing = sorted({s for s in sentences if s not in self.values}, key=lambda s: (-len(s), s))
        self.n_cached += len(set(sentences)) - len(missing)
        if missing:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                self.path.write_text("")
            t0 = time.perf_counter()
            with open(self.path, "a", encoding="utf-8") as fh:
                if self.path.stat().st_size == 0:
                    fh.write(json.dumps({"signature": self.signature()}) + "\n")
                for start in range(0, len(missing), self.chunk_size):
                    chunk = missing[start : start + self.chunk_size]
                    kw = {} if batch_size is None else {"batch_size": batch_size}
                    for s, v in zip(chunk, self.scorer.perplexities(chunk, **kw), strict=True):
                        self.values[s] = v
                        value = v if math.isfinite(v) else None
                        fh.write(json.dumps({"s": s, "ppl": value}, ensure_ascii=False) + "\n")
                    fh.flush()
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
