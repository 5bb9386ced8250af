"""Draw the blind sample of a human evaluation (the paper's Appendix A: 300 paraphrases per
corpus sharing the same sources).

Steps, all seeded and independent of file order:

1. per corpus, the keys of the sources with at least one paraphrase that is not a copy of the
   source (:func:`paraamr.corpus.subset.with_new_paraphrase`); keep the keys common to all;
2. draw ``n`` of those keys (sorted keys, one ``numpy`` generator);
3. per corpus and drawn source, one of its distinct non-copy paraphrases (sorted, so their
   order in the file does not matter), chosen by the same generator;
4. optional attention checks: ``checks`` copies (the paraphrase *is* the source: similarity 3,
   diversity 1 expected) and ``checks`` unrelated pairs (another drawn source as paraphrase:
   similarity 1 expected);
5. shuffle everything and give each item an opaque id (random hex, no order or corpus in it).

Only the ``n`` drawn sources' records are held in memory; the corpora are streamed twice.

>>> from paraamr.corpus.records import Paraphrase, SourceRecord
>>> def corpus(tag):
...     rows = [SourceRecord(f"S{i}.", [Paraphrase(f"S{i}."), Paraphrase(f"{tag}{i}.")])
...             for i in range(5)]
...     return lambda: iter(rows)
>>> s = draw_sample({"A": corpus("a"), "B": corpus("b")}, n=2, seed=0)
>>> len(s.items), sorted({k.corpus for k in s.items})
(4, ['A', 'B'])
>>> all(k.paraphrase[0] in "ab" for k in s.items)   # copies of the source are never drawn
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from paraamr.corpus.records import SourceRecord, same_sentence
from paraamr.corpus.subset import (
    common_keys,
    filter_common,
    key_of,
    source_keys,
    with_new_paraphrase,
)
from paraamr.errors import InputError

__all__ = [
    "KeyItem",
    "Sample",
    "draw_sample",
    "draw_sources",
    "CHECK_COPY",
    "CHECK_UNRELATED",
    "kit_id",
]

#: the ``corpus`` of attention-check items in the key (never a user corpus name)
CHECK_COPY = "check:copy"
CHECK_UNRELATED = "check:unrelated"
#: the answers an attentive annotator gives to each kind of check (question -> score)
CHECK_EXPECTED = {CHECK_COPY: {"similarity": 3, "diversity": 1}, CHECK_UNRELATED: {"similarity": 1}}


@dataclass(frozen=True)
class KeyItem:
    """One line of the answer key: what annotators see (id, source, paraphrase) and what they
    must not (the corpus, or the check kind and its expected answers)."""

    item_id: str
    source: str
    paraphrase: str
    corpus: str
    expected: dict[str, int] = field(default_factory=dict)

    @property
    def is_check(self) -> bool:
        return self.corpus in CHECK_EXPECTED

    def to_json(self) -> dict:
        out = asdict(self)
        if not self.expected:
            out.pop("expected")
        return out


@dataclass(frozen=True)
class Sample:
    """The shuffled items of a kit and how they were drawn."""

    items: tuple[KeyItem, ...]
    corpora: tuple[str, ...]
    n: int
    seed: int
    n_common: int  # sources with a non-copy paraphrase in every corpus

    @property
    def id(self) -> str:
        return kit_id(self.items)


def kit_id(items: Iterable[KeyItem]) -> str:
    """A short fingerprint of a key (ids, sentences, corpora): the page and its downloads carry
    it, so answers are never scored against another kit's key.

    >>> kit_id([KeyItem("x1", "A.", "B.", "C")]) == kit_id([KeyItem("x1", "A.", "B.", "C")])
    True
    """
    h = hashlib.blake2b(digest_size=8)
    for k in items:
        h.update(json.dumps(k.to_json(), sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _ids(rng: np.random.Generator, count: int) -> list[str]:
    ids: list[str] = []
    seen: set[str] = set()
    while len(ids) < count:
        i = rng.bytes(4).hex()
        if i not in seen:
            seen.add(i)
            ids.append(i)
    return ids


def draw_sample(
    corpora: Mapping[str, Callable[[], Iterable[SourceRecord]]],
    n: int,
    seed: int = 0,
    checks: int = 0,
    lowercase_keys: bool = False,
) -> Sample:
    """Draw ``n`` common sources and one non-copy paraphrase of each per corpus, plus
    ``checks`` attention checks of each kind, shuffled with opaque ids.

    ``corpora`` maps a corpus name to a function returning a fresh iterator of its records
    (called twice). Raises :class:`~paraamr.errors.InputError` when fewer than ``n`` sources are
    common to all corpora, naming how many there are.
    """
    if len(corpora) < 1:
        raise InputError("a human evaluation needs at least one corpus")
    if n < 1:
        raise InputError(f"n must be >= 1, got {n}")
    if checks < 0:
        raise InputError(f"checks must be >= 0, got {checks}")
    names = tuple(corpora)
    for name in names:
        if name.startswith("check:"):
            raise InputError(f"corpus names cannot start with 'check:' (got {name!r})")
    rng = np.random.default_rng(seed)
    drawn, n_common = draw_sources(corpora, n, rng, lowercase_keys)
    items: list[tuple[str, str, str, dict]] = []
    for c in names:
        for r in drawn[c]:
            # sorted: the draw does not depend on the order paraphrases are listed in
            options = sorted({p.text for p in r.paraphrases if not same_sentence(r.text, p.text)})
            items.append((r.text, options[int(rng.integers(len(options)))], c, {}))
    sources = [r.text for r in drawn[names[0]]]
    if checks:
        if n < 2:
            raise InputError(
                "attention checks need n >= 2 (an unrelated pair takes another source)"
            )
        picks = rng.choice(n, size=min(checks, n), replace=False)
        for i in picks:
            items.append((sources[i], sources[i], CHECK_COPY, CHECK_EXPECTED[CHECK_COPY]))
            other = (int(i) + 1 + int(rng.integers(n - 1))) % n
            items.append((sources[i], sources[other], CHECK_UNRELATED,
                          CHECK_EXPECTED[CHECK_UNRELATED]))  # fmt: skip
    order = rng.permutation(len(items))
    ids = _ids(rng, len(items))
    shuffled = tuple(
        KeyItem(ids[j], *items[int(k)][:3], dict(items[int(k)][3])) for j, k in enumerate(order)
    )
    return Sample(shuffled, names, n, seed, n_common)


def draw_sources(
    corpora: Mapping[str, Callable[[], Iterable[SourceRecord]]],
    n: int,
    rng: np.random.Generator,
    lowercase_keys: bool = False,
) -> tuple[dict[str, list[SourceRecord]], int]:
    """``n`` sources drawn from those every corpus has a non-copy paraphrase of: per corpus its
    records of them, in key order (the same sources, in the same order, for every corpus), and
    how many sources were common. Streams each corpus twice; holds only the drawn records."""
    names = tuple(corpora)
    common = common_keys(
        [source_keys(with_new_paraphrase(corpora[c]()), lowercase_keys) for c in names]
    )
    if len(common) < n:
        raise InputError(
            f"only {len(common)} sources have a paraphrase other than a copy in every corpus "
            f"({', '.join(names)}); asked for n={n}"
        )
    drawn = np.sort(rng.choice(common, size=n, replace=False))
    out: dict[str, list[SourceRecord]] = {}
    for c in names:
        by_pos: dict[int, SourceRecord] = {}
        for r in filter_common(with_new_paraphrase(corpora[c]()), drawn, lowercase_keys):
            pos = int(np.searchsorted(drawn, np.uint64(key_of(r.text, lowercase_keys))))
            by_pos[pos] = r
        out[c] = [by_pos[i] for i in range(n)]  # key order: the draw ignores the file order
    return out, len(common)
