"""Which corpora to compare: ``name=FILE[:format]`` specs, read by every multi-corpus stage
(Table 2, the human-evaluation kit, Table 3's examples).
"""

from __future__ import annotations

from dataclasses import dataclass

from paraamr.corpus.readers import FORMATS
from paraamr.errors import ParaAMRError

__all__ = ["CorpusSpec", "parse_corpus_specs"]


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus to compare: display name, path and reader format (:data:`FORMATS`)."""

    name: str
    path: str
    fmt: str | None = None


def parse_corpus_specs(spec: str | list[str]) -> list[CorpusSpec]:
    """Parse ``"name=FILE[:format] ..."`` (one string, or one item per list entry).

    >>> parse_corpus_specs("A=a.jsonl B=/x/b.tsv:paranmt")
    ... # doctest: +NORMALIZE_WHITESPACE
    [CorpusSpec(name='A', path='a.jsonl', fmt=None),
     CorpusSpec(name='B', path='/x/b.tsv', fmt='paranmt')]
    """
    out = []
    for item in spec.split() if isinstance(spec, str) else spec:
        name, sep, rest = item.partition("=")
        if not sep or not name or not rest:
            raise ParaAMRError(f"corpus spec {item!r} is not name=FILE[:format]")
        path, fmt = rest, None
        head, colon, tail = rest.rpartition(":")
        if colon and tail in FORMATS:
            path, fmt = head, tail
        elif colon and head and "/" not in tail and "." not in tail:
            raise ParaAMRError(f"unknown format {tail!r} in {item!r}; known: {', '.join(FORMATS)}")
        out.append(CorpusSpec(name, path, fmt))
    if len({c.name for c in out}) != len(out):
        raise ParaAMRError("corpus names must be unique")
    return out
