"""Streaming readers and writers for TOP-style data files.

Formats (``FORMATS``):

==========  ====================================================================
``top-v1``  TOP v1 TSV: ``raw<TAB>tokenized<TAB>tree`` (the tokenized column must equal
            the tree's terminals)
``seq``     one tree per line (``*.seq``, as in the cleaned TOP v1 splits)
``topv2``   TOPv2 TSV: ``domain<TAB>utterance<TAB>parse``, with or without the header row
            (``domain<TAB>utterance<TAB>semantic_parse`` or ``...<TAB>seqlogical``)
==========  ====================================================================

Blank lines hold no record and are passed over. A bad line (wrong column count, invalid
tree, tokenized column that disagrees with the tree, undecodable bytes) raises
:class:`~paraamr.errors.CorpusFormatError` naming file and line, or, with
``on_error="skip"``, is skipped and counted in a :class:`~paraamr.corpus.errors.SkipLog`.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "x.seq")
>>> _ = open(p, "w").write("[IN:A x [SL:B y ] ]\\n[IN:A x [SL:B ] ]\\n")
>>> skips = SkipLog("skip")
>>> [e.utterance for e in read_examples(p, skips=skips)]
['x y']
>>> skips.total
1
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import iter_lines
from paraamr.errors import ConfigError, DataNotFoundError
from paraamr.top.trees import Node, TopTreeError, parse_tree, to_string, utterance

__all__ = [
    "FORMATS",
    "TOPV2_HEADER",
    "TopExample",
    "guess_format",
    "read_examples",
    "read_trees",
    "write_examples",
]

FORMATS = ("top-v1", "seq", "topv2")
TOPV2_HEADER = "domain\tutterance\tsemantic_parse"


@dataclass(frozen=True)
class TopExample:
    """One annotated utterance.

    Attributes:
        tree: the parse.
        text: the utterance as the file gives it (TOP v1 raw column, TOPv2 utterance
            column; for ``seq`` files the tree's terminals).
        tokenized: TOP v1's tokenized column (``None`` in other formats).
        domain: TOPv2's domain column (``None`` in other formats).
        path: source file.
        line: 1-based line number in ``path``.
    """

    tree: Node
    text: str
    tokenized: str | None = None
    domain: str | None = None
    path: str | None = None
    line: int | None = None

    @property
    def utterance(self) -> str:
        """The tree's terminals joined by single spaces (what a parser reads)."""
        return utterance(self.tree)


def guess_format(path: str | os.PathLike) -> str:
    """``seq`` for ``*.seq``; ``topv2`` when the first line is a TOPv2 header; else ``top-v1``.

    >>> guess_format("train.clean.seq")
    'seq'
    """
    p = Path(path)
    if p.suffix == ".seq":
        return "seq"
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            first = fh.readline().lstrip("\ufeff")
    except OSError:
        return "top-v1"
    return "topv2" if first.startswith("domain\tutterance\t") else "top-v1"


def _tree(text: str, skips: SkipLog, path: str, n: int, allow_empty: bool) -> Node | None:
    try:
        return parse_tree(text, allow_empty=allow_empty)
    except TopTreeError as e:
        # raise: the full message; skip: one count per rule broken
        skips.skip(
            f"bad tree: {e}" if skips.on_error == "raise" else f"bad tree ({e.kind})", path, n
        )
        return None


def read_examples(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    on_error: str = "raise",
    skips: SkipLog | None = None,
    allow_empty: bool = False,
) -> Iterator[TopExample]:
    """Stream the examples of one file.

    Args:
        path: the file.
        fmt: one of :data:`FORMATS`; ``None`` guesses (:func:`guess_format`).
        on_error: ``"raise"`` or ``"skip"`` (ignored when ``skips`` is given).
        skips: where skipped lines are counted; its ``on_error`` decides.
        allow_empty: accept trees with empty spans (see
            :func:`~paraamr.top.trees.parse_tree`; needed to keep TOPv2's 24 such rows).

    Yields:
        :class:`TopExample` in file order.

    Raises:
        DataNotFoundError: the file does not exist.
        CorpusFormatError: a bad line, with ``on_error="raise"``.
    """
    path = str(path)
    if not os.path.isfile(path):
        raise DataNotFoundError(
            f"TOP data file {path} not found (the TOP v1 / TOPv2 releases are CC-BY-SA; "
            "point the path at a local copy)"
        )
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise ConfigError(f"unknown TOP format {fmt!r}; expected one of {FORMATS}")
    skips = skips if skips is not None else SkipLog(on_error)
    for n, line in iter_lines(path, skips):
        if not line.strip():
            continue
        if fmt == "seq":
            tree = _tree(line, skips, path, n, allow_empty)
            if tree is not None:
                yield TopExample(tree, utterance(tree), path=path, line=n)
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            skips.skip(f"expected 3 tab-separated columns ({fmt}), got {len(cols)}", path, n)
            continue
        if fmt == "topv2" and n == 1 and cols[0] == "domain" and cols[1] == "utterance":
            continue
        tree = _tree(cols[2], skips, path, n, allow_empty)
        if tree is None:
            continue
        if fmt == "top-v1":
            if " ".join(cols[1].split()) != utterance(tree):
                skips.skip("tokenized column differs from the tree's terminals", path, n)
                continue
            yield TopExample(tree, cols[0], tokenized=cols[1], path=path, line=n)
        else:
            yield TopExample(tree, cols[1], domain=cols[0], path=path, line=n)


def read_trees(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    on_error: str = "raise",
    skips: SkipLog | None = None,
    allow_empty: bool = False,
) -> list[Node]:
    """All trees of one file (see :func:`read_examples`)."""
    it = read_examples(path, fmt, on_error=on_error, skips=skips, allow_empty=allow_empty)
    return [e.tree for e in it]


def write_examples(
    examples: Iterable[TopExample | Node],
    path: str | os.PathLike,
    fmt: str,
    *,
    header: str | None = TOPV2_HEADER,
) -> int:
    """Write examples in one of :data:`FORMATS` (atomic: a ``.part`` file renamed at the end).

    Trees are written canonically (:func:`~paraamr.top.trees.to_string`). A bare
    :class:`Node` is written with its terminals as raw/tokenized text (and an empty domain).

    Args:
        examples: examples or trees.
        path: output file.
        fmt: one of :data:`FORMATS`.
        header: first line of a ``topv2`` file (``None``: no header).

    Returns:
        The number of examples written.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown TOP format {fmt!r}; expected one of {FORMATS}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    n = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        if fmt == "topv2" and header is not None:
            fh.write(header + "\n")
        for ex in examples:
            if isinstance(ex, Node):
                ex = TopExample(ex, utterance(ex))
            tree = to_string(ex.tree)
            if fmt == "seq":
                fh.write(tree + "\n")
            elif fmt == "top-v1":
                tok = ex.tokenized if ex.tokenized is not None else ex.utterance
                fh.write(f"{ex.text}\t{tok}\t{tree}\n")
            else:
                fh.write(f"{ex.domain or ''}\t{ex.text}\t{tree}\n")
            n += 1
    tmp.replace(path)
    return n
