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


def iter_all_lines(path: str | os.PathLike) -> Iterator[tuple[int, str, str | None]]:
    """Every line of a file as ``(line_number, text, error)``, 1-based, newline stripped; a line
    that is not UTF-8 has ``text=""`` and ``error`` saying where it broke (never dropped, wherever
    it is: first, middle, last, with or without a final newline). A leading BOM is removed.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.txt")
    >>> _ = open(p, "wb").write(b"ok\\nbad \\xff")
    >>> list(iter_all_lines(p))
    [(1, 'ok', None), (2, '', 'undecodable bytes (invalid start byte at byte 4)')]
    """
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield n, "", f"undecodable bytes ({e.reason} at byte {e.start})"
                continue
            if n == 1:
                text = text.lstrip("\ufeff")
            yield n, text.rstrip("\r\n"), None


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
    if fmt not in ("text", "tsv", "jsonl"):
        raise ConfigError(f"input_format: unknown sentence input format {fmt!r}")
    for n, line, bad in iter_all_lines(path):
        if bad:
            yield Item(n, "", error=bad)
        elif fmt == "text":
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
