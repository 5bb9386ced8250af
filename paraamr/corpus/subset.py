"""The paper's common-subset step: keep only sources present in every compared corpus.

Source keys are 64-bit hashes held in sorted NumPy arrays, so 15M sources take ~120 MB.

>>> from paraamr.corpus.records import SourceRecord
>>> a = [SourceRecord("A.", []), SourceRecord("B.", [])]
>>> b = [SourceRecord("B.", []), SourceRecord("C.", [])]
>>> keys = common_keys([source_keys(a), source_keys(b)])
>>> [r.text for r in a if key_of(r.text) in set(keys.tolist())]
['B.']
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import numpy as np

from paraamr.corpus.records import SourceRecord, normalize_key

__all__ = ["key_of", "source_keys", "common_keys", "filter_common"]


def key_of(text: str, lowercase: bool = False) -> int:
    """A stable 64-bit key of a source sentence (whitespace-normalised)."""
    digest = hashlib.blake2b(normalize_key(text, lowercase).encode("utf-8"), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


def source_keys(records: Iterable[SourceRecord], lowercase: bool = False) -> np.ndarray:
    """Sorted unique keys of every source in a corpus (streams; only keys are kept)."""
    keys = np.fromiter((key_of(r.text, lowercase) for r in records), dtype=np.uint64)
    return np.unique(keys)


def common_keys(key_sets: list[np.ndarray]) -> np.ndarray:
    """Intersection of sorted key arrays."""
    if not key_sets:
        return np.array([], dtype=np.uint64)
    out = key_sets[0]
    for k in key_sets[1:]:
        out = np.intersect1d(out, k, assume_unique=True)
    return out


def filter_common(
    records: Iterable[SourceRecord], keys: np.ndarray, lowercase: bool = False
) -> Iterator[SourceRecord]:
    """Yield the records whose source key is in ``keys`` (a sorted array); first occurrence only.

    Which keys were seen is one byte per key of ``keys`` (not a Python set of every kept key).
    """
    seen = np.zeros(len(keys), dtype=bool)
    for r in records:
        k = key_of(r.text, lowercase)
        i = np.searchsorted(keys, np.uint64(k))
        if i < len(keys) and keys[i] == k and not seen[i]:
            seen[i] = True
            yield r
