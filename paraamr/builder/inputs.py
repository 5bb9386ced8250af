"""Inputs of the corpus builder: sentences (text, JSON lines, TSV) or PENMAN AMR files.

Every item keeps its 1-based line number, which is its identity: sharding (``line % n``), resume
and the merge order all use it.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "s.txt")
>>> _ = open(p, "w").write("The boy left.\\n\\nHe came back.\\n")
>>> [(i.line, i.text) for i in read_sentences(p)]
[(1, 'The boy left.'), (2, ''), (3, 'He came back.')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import iter_lines
from paraamr.errors import ConfigError

__all__ = ["Item", "read_sentences", "read_penman_items", "read_items", "INPUT_FORMATS"]

INPUT_FORMATS = ("text", "jsonl", "tsv", "penman")


@dataclass
class Item:
    """One unit of work: a source sentence (and, for PENMAN input, its gold graph)."""

    line: int
    text: str
    graph: str | None = None  # PENMAN with metadata, for gold-graph input
    error: str | None = None  # set when the input record itself is bad


def guess_input_format(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    return {
        ".jsonl": "jsonl",
        ".json": "jsonl",
        ".tsv": "tsv",
        ".txt": "text",
        ".amr": "penman",
        ".penman": "penman",
    }.get(suffix, "text")


def read_sentences(
    path: str | os.PathLike, fmt: str = "text", field: str = "text", column: int = 0
) -> Iterator[Item]:
    """One item per input line (blank lines and bad records become items with ``error`` set, so
    they are rejected with a reason instead of silently shifting line numbers)."""
    skips = SkipLog("skip")  # undecodable lines are counted here and reported as rejects below
    last = 0
    for n, line in iter_lines(path, skips):
        for missing in range(last + 1, n):  # lines iter_lines skipped (undecodable bytes)
            yield Item(missing, "", error="undecodable bytes")
        last = n
        if fmt == "text":
            yield Item(n, line.strip(), error=None if line.strip() else "empty line")
        elif fmt == "tsv":
            cols = line.split("\t")
            text = cols[column].strip() if len(cols) > column else ""
            yield Item(n, text, error=None if text else f"no text in column {column}")
        elif fmt == "jsonl":
            try:
                obj = json.loads(line)
                text = obj[field] if isinstance(obj, dict) else None
            except (json.JSONDecodeError, KeyError) as e:
                yield Item(n, "", error=f"bad JSON line ({type(e).__name__}: {e})")
                continue
            ok = isinstance(text, str) and text.strip()
            yield Item(n, text.strip() if ok else "", error=None if ok else f"no text in {field!r}")
        else:
            raise ConfigError(f"input_format: unknown sentence input format {fmt!r}")


def read_penman_items(path: str | os.PathLike) -> Iterator[Item]:
    """Graphs of a PENMAN file (:func:`paraamr.amr.io.read_penman_blocks`), each an item whose
    line is the first line of its block. A malformed block, or one without ``::snt``, is an item
    with ``error`` set (rejected with the reason, never dropped silently). Blocks of comments only
    (file headers) are not graphs and are ignored."""
    from paraamr.amr.io import read_penman_blocks

    for b in read_penman_blocks(path):
        if b.error is not None:
            yield Item(b.line, "", error=f"malformed PENMAN graph: {b.error.reason}")
            continue
        snt = " ".join(b.graph.metadata.get("snt", "").split())
        yield Item(b.line, snt, graph=b.text, error=None if snt else "graph without ::snt metadata")


def read_items(path: str | os.PathLike, fmt: str | None = None, **kw) -> Iterator[Item]:
    """Sentences, or for ``fmt="penman"`` gold graphs (``::snt`` gives the source text)."""
    fmt = fmt or guess_input_format(path)
    if fmt == "penman":
        return read_penman_items(path)
    return read_sentences(path, fmt, **kw)
