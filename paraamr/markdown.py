"""Markdown output: the one writer of markdown tables (paper tables, reports, examples).

Examples:
    >>> markdown_grid(["a"], [[1]])
    ['| a |', '|---|', '| 1 |']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["markdown_grid"]


def markdown_grid(
    header: Sequence[str], rows: Iterable[Sequence[Any]], right: Iterable[int] = ()
) -> list[str]:
    """A markdown table as lines: the header, the rule (``---:`` for the column indices in
    ``right``), one line per row. The one writer of markdown tables in the project.

    Examples:
        >>> for line in markdown_grid(["a", "b"], [[1, "x"], [2, "y"]], right=[0]):
        ...     print(line)
        | a | b |
        |---:|---|
        | 1 | x |
        | 2 | y |
    """
    right = set(right)
    rule = "|" + "".join("---:|" if i in right else "---|" for i in range(len(header)))
    out = ["| " + " | ".join(str(h) for h in header) + " |", rule]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out
