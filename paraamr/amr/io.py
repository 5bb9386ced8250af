"""Reading PENMAN files: one block reader for every stage (the corpus builder's gold-graph input,
:func:`read_amr_file`, the demo).

A file holds blocks separated by blank lines (lines of only whitespace); a block is comment lines
(``# ::snt ...`` metadata, kept in ``graph.metadata``) followed by one PENMAN graph. Blocks of
comments only (file headers) are passed over. A block is malformed when a line holds bytes that
are not UTF-8, when penman cannot decode it, when its parentheses do not balance, or when text
follows the graph's closing parenthesis (e.g. a second graph without a blank line before it,
which penman would silently drop). Graphs are decoded with penman's AMR model.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import penman
from penman.exceptions import PenmanError
from penman.models.amr import model as amr_model

from paraamr.corpus.errors import check_on_error
from paraamr.errors import AMRError

__all__ = ["PenmanBlock", "read_penman_blocks", "read_amr_file"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PenmanBlock:
    """One graph block of a PENMAN file.

    Attributes:
        line: 1-based first line of the block (its comments included).
        graph_line: line of the graph's opening parenthesis.
        text: the block as written (metadata comments included).
        graph: the decoded graph, or ``None`` when the block is malformed.
        error: why it is malformed (names file and line), else ``None``.
    """

    line: int
    graph_line: int
    text: str
    graph: penman.Graph | None
    error: AMRError | None


def read_penman_blocks(path: str | PathLike[str]) -> Iterator[PenmanBlock]:
    """Every graph block of ``path`` in file order, malformed ones with their ``error``.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".amr", delete=False) as f:
    ...     _ = f.write("# ::snt Dogs bark.\\n(b / bark-01 :ARG0 (d / dog))\\n\\n(x / b :r (y\\n")
    >>> blocks = list(read_penman_blocks(f.name))
    >>> [(b.line, b.graph is not None, b.error and b.error.reason) for b in blocks]
    [(1, True, None), (4, False, 'unbalanced parentheses: the graph is not closed')]
    >>> os.remove(f.name)
    """
    name = str(path)
    for block_line, block, bad_line in _blocks(Path(path)):
        offset = next((j for j, t in enumerate(block) if not t.lstrip().startswith("#")), None)
        if offset is None:
            continue  # comments only
        text = "\n".join(block)
        graph_line = block_line + offset
        if bad_line is not None:
            err = AMRError("undecodable bytes (not UTF-8)", name, bad_line)
            yield PenmanBlock(block_line, graph_line, text, None, err)
            continue
        try:
            g = _decode_block(block, offset, name, block_line)
        except AMRError as exc:
            yield PenmanBlock(block_line, graph_line, text, None, exc)
            continue
        yield PenmanBlock(block_line, graph_line, text, g, None)


def read_amr_file(
    path: str | PathLike[str],
    on_error: str = "raise",
    stats: dict[str, int] | None = None,
) -> Iterator[tuple[int, penman.Graph]]:
    """
    Yield ``(line, graph)`` for each AMR graph of a PENMAN file.

    Blocks are read by :func:`read_penman_blocks` (module docstring: what
    is malformed). *line* is the 1-based line number where the graph
    starts, i.e. its first non-comment line (the opening parenthesis).

    Args:
        path: the file, read as UTF-8
        on_error: ``"raise"`` to raise :class:`AMRError` at the first
            malformed graph, ``"skip"`` to log a warning and go on
        stats: if given, a dict updated in place while reading: the
            numbers of graphs yielded and of malformed graphs skipped
            are added to its ``"graphs"`` and ``"skipped"`` keys
            (created as 0 if missing), so one dict can total several
            files
    Yields:
        ``(line, graph)`` pairs in file order.
    Raises:
        AMRError: (``on_error="raise"``) naming the file and line of the
            malformed graph.
        ConfigError: for an unknown *on_error* (a ``ValueError``).
        OSError: if the file cannot be read.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        ...     _ = f.write("# header\\n\\n# ::snt Dogs bark.\\n(b / bark-01 :ARG0 (d / dog))\\n")
        >>> counts = {}
        >>> [(line, g.top, g.metadata["snt"]) for line, g in read_amr_file(f.name, stats=counts)]
        [(4, 'b', 'Dogs bark.')]
        >>> counts
        {'graphs': 1, 'skipped': 0}
        >>> os.remove(f.name)
    """
    check_on_error(on_error)
    if stats is None:
        stats = {}
    stats.setdefault("graphs", 0)
    stats.setdefault("skipped", 0)
    for block in read_penman_blocks(path):
        if block.error is not None:
            if on_error == "raise":
                raise block.error
            stats["skipped"] += 1
            logger.warning("skipping malformed AMR graph: %s", block.error)
            continue
        stats["graphs"] += 1
        yield block.graph_line, block.graph


# Helpers #####################################################################


def _blocks(path: Path) -> Iterator[tuple[int, list[str], int | None]]:
    """Yield (1-based first line, lines, first undecodable line or None) per run of non-blank
    lines; a line that is not UTF-8 is kept (decoded with replacement) and reported."""
    start, bad = 0, None
    block: list[str] = []
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", errors="replace")
                bad = bad or lineno
            text = text.rstrip("\r\n")
            if text.strip():
                if not block:
                    start = lineno
                block.append(text)
            elif block:
                yield start, block, bad
                block, bad = [], None
            else:
                bad = None  # an undecodable blank line belongs to no block
    if block:
        yield start, block, bad


def _decode_block(block: list[str], graph_offset: int, name: str, block_line: int) -> penman.Graph:
    graph_line = block_line + graph_offset
    end = _graph_end(block, graph_offset)
    if end is None:
        raise AMRError("unbalanced parentheses: the graph is not closed", name, graph_line)
    j, col = end
    tail = [block[j][col:], *block[j + 1 :]]
    extra = next((n for n, text in enumerate(tail) if text.strip()), None)
    if extra is not None:
        text = tail[extra].strip()
        raise AMRError(
            f"unexpected text after the graph: {text[:40]!r}", name, block_line + j + extra
        )
    try:
        g = penman.decode("\n".join(block), model=amr_model)
    except PenmanError as exc:
        lineno = getattr(exc, "lineno", None)
        line = block_line + lineno - 1 if lineno else graph_line
        raise AMRError(
            f"cannot decode AMR graph starting at line {graph_line}: {_one_line(exc)}", name, line
        ) from exc
    if g.top is None:
        raise AMRError("empty AMR graph", name, graph_line)
    return g


def penman_chars(lines: Iterable[str]) -> Iterator[tuple[int, int, str, int, bool]]:
    """``(line index, column, char, depth, in_string)`` for every character of PENMAN text,
    line ends as ``"\\n"``; ``depth`` (parenthesis nesting) and ``in_string`` (inside a quoted
    constant, backslash escapes honoured) are the states *after* the character. Comment lines
    (``#`` first, outside every tree and string) are skipped. The one bracket scanner of the
    project: :func:`_graph_end` here and :func:`paraamr.builder.graphs.count_trees` use it.

    >>> [(c, d) for _, _, c, d, s in penman_chars(['(a / "x)")']) if c in "()" and not s]
    [('(', 1), (')', 0)]
    """
    depth, in_string, escaped = 0, False, False
    for j, line in enumerate(lines):
        if depth == 0 and not in_string and line.lstrip().startswith("#"):
            continue
        for col, ch in enumerate(line + "\n"):
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            yield j, col, ch, depth, in_string


def _graph_end(block: list[str], first: int) -> tuple[int, int] | None:
    """(line offset, column) just after the parenthesis that closes the first graph."""
    for j, col, ch, depth, in_string in penman_chars(block[first:]):
        if ch == ")" and not in_string and depth <= 0:
            return first + j, col + 1
    return None


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
