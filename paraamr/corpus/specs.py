"""Which corpora to compare: ``name=FILE[:format]`` specs, read by every multi-corpus stage
(Table 2, the human-evaluation kit, Table 3's examples). A ``FILE`` written ``data:REL`` is
``REL`` inside the data folder (:func:`in_data_dir`), so a preset names the shared data
without knowing where it lies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from paraamr.corpus.readers import FORMATS
from paraamr.errors import ParaAMRError

__all__ = [
    "CorpusSpec",
    "parse_corpus_specs",
    "in_data_dir",
    "with_built_runs",
    "DATA_PREFIX",
    "BUILT_CORPUS",
]

#: a corpus path that starts with this lies inside the data folder
DATA_PREFIX = "data:"
#: the corpus file a builder run folder holds (``experiments/build.py out_dir=DIR``)
BUILT_CORPUS = "corpus.jsonl"


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


def in_data_dir(specs: list[CorpusSpec], data_dir: Callable[[], Path]) -> list[CorpusSpec]:
    """``specs`` with every ``data:REL`` path made ``<data folder>/REL``; ``data_dir`` is called
    only when a spec needs it (other corpora need no data folder).

    >>> specs = parse_corpus_specs("A=data:para/x_src.txt:src-trg B=b.jsonl")
    >>> [(s.path, s.fmt) for s in in_data_dir(specs, lambda: Path("/d"))]
    [('/d/para/x_src.txt', 'src-trg'), ('b.jsonl', None)]
    """
    out = []
    for s in specs:
        if s.path.startswith(DATA_PREFIX):
            s = replace(s, path=str(data_dir() / s.path.removeprefix(DATA_PREFIX)))
        out.append(s)
    return out


def with_built_runs(specs: list[CorpusSpec]) -> list[CorpusSpec]:
    """``specs`` with every builder run folder (a folder holding :data:`BUILT_CORPUS`, no
    format given) made its ``corpus.jsonl``, so ``A=results/build`` names a built corpus.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); _ = open(os.path.join(d, "corpus.jsonl"), "w")
    >>> with_built_runs([CorpusSpec("A", d)])[0].path == os.path.join(d, "corpus.jsonl")
    True
    """
    out = []
    for s in specs:
        p = Path(s.path)
        if s.fmt is None and p.is_dir() and (p / BUILT_CORPUS).is_file():
            s = replace(s, path=str(p / BUILT_CORPUS), fmt="paraamr")
        out.append(s)
    return out
