"""The paper's common-subset step: keep only sources present in every compared corpus.

Source keys are 64-bit hashes held in sorted NumPy arrays, so 15M sources take ~120 MB.

Examples:
    >>> from paraamr.corpus.records import SourceRecord
    >>> a = [SourceRecord("A.", []), SourceRecord("B.", [])]
    >>> b = [SourceRecord("B.", []), SourceRecord("C.", [])]
    >>> keys = common_keys([source_keys(a), source_keys(b)])
    >>> [r.text for r in a if key_of(r.text) in set(keys.tolist())]
    ['B.']
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator

import numpy as np

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import read_corpus
from paraamr.corpus.records import SourceRecord, normalize_key, same_sentence
from paraamr.corpus.specs import CorpusSpec

__all__ = [
    "key_of",
    "source_keys",
    "common_keys",
    "filter_common",
    "with_new_paraphrase",
    "common_subset",
]

log = logging.getLogger(__name__)


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


def with_new_paraphrase(records: Iterable[SourceRecord]) -> Iterator[SourceRecord]:
    """Records with at least one paraphrase that differs from the source (case-insensitive)."""
    for r in records:
        if any(not same_sentence(r.text, p.text) for p in r.paraphrases):
            yield r


def common_subset(
    specs: list[CorpusSpec],
    on_error: str = "raise",
    progress: bool = True,
    lowercase_keys: bool = False,
):
    """Sorted keys of the sources present (with a usable paraphrase) in every corpus; with
    ``lowercase_keys`` sources match case-insensitively (pass the same to :func:`subset_stream`).
    """
    from tqdm.auto import tqdm

    sets = []
    for spec in specs:
        records = read_corpus(spec.path, spec.fmt, SkipLog(on_error))
        bar = tqdm(records, desc=f"sources {spec.name}", unit="src", disable=not progress)
        keys = source_keys(with_new_paraphrase(bar), lowercase_keys)
        log.info("%s: %d distinct sources", spec.name, len(keys))
        sets.append(keys)
    common = common_keys(sets)
    log.info("common subset: %d sources", len(common))
    return common
