"""Strict reading of one PENMAN graph string as the builder receives it (from amrlib or a gold
file): penman's own decoder reads the first tree and silently ignores the rest of the string, so
a graph written as several trees, or followed by stray text, would lose triples without a word.

* Text outside every tree (stray words, an unclosed or extra parenthesis) is an error.
* An edge with no target or no role name (``(o / over :ARG1)``, a lone ``:``) is an error:
  penman reads it with a warning, and no focus of it can be laid out.
* Several trees are read as one graph (the union of their triples, top = the first tree's top):
  trees that share variables form a connected graph that can be laid out; a *disconnected* one
  cannot be laid out from any focus, so the builder rejects it at the re-focus stage.

>>> g, n = decode_amr("(a / alpha :ARG0 (b / beta)) (c / gamma :ARG1 a)")
>>> n, g.top, sorted(g.variables())
(2, 'a', ['a', 'b', 'c'])
>>> decode_amr("(a / alpha) trailing words")
Traceback (most recent call last):
paraamr.errors.AMRError: text outside the graph: 'trailing words'
"""

from __future__ import annotations

import penman
from penman.models.amr import model as amr_model

from paraamr.amr.io import penman_chars
from paraamr.amr.serialize import dangling_edges
from paraamr.errors import AMRError

__all__ = ["decode_amr", "count_trees"]


def count_trees(text: str) -> int:
    """Top-level trees in a PENMAN string (comment lines ignored); raises :class:`AMRError` for
    text outside the trees or unbalanced parentheses.

    >>> count_trees("# ::snt Hi.\\n(h / hi) (x / there)")
    2
    """
    trees, depth, in_string = 0, 0, False
    outside: list[str] = []
    for _, _, ch, depth, in_string in penman_chars(text.splitlines()):
        if ch == "(" and not in_string:
            trees += depth == 1
        elif ch == ")" and not in_string and depth < 0:
            raise AMRError("unbalanced parentheses: ')' without '('")
        if depth == 0 and ch != ")" and ch != "(":
            outside.append(ch)
    stray = " ".join("".join(outside).split())
    if depth > 0 or in_string:
        raise AMRError("unbalanced parentheses: the graph is not closed")
    if stray:
        raise AMRError(f"text outside the graph: {stray[:40]!r}")
    return trees


def decode_amr(text: str) -> tuple[penman.Graph, int]:
    """The graph of a PENMAN string and how many trees it was written as (see the module)."""
    n = count_trees(text)
    try:
        trees = list(penman.iterdecode(text, model=amr_model))
    except penman.exceptions.PenmanError as e:
        raise AMRError(f"cannot decode PENMAN: {' '.join(str(e).split())}") from e
    if not trees or any(g.top is None for g in trees):
        raise AMRError("empty AMR graph")
    if len(trees) != n:  # pragma: no cover - the scan and penman disagree on the tree count
        raise AMRError(f"read {len(trees)} of the {n} trees in the string")
    if bad := [t for g in trees for t in dangling_edges(g)]:
        s, role, target = bad[0]
        raise AMRError(f"{len(bad)} edge(s) with no {'target' if target is None else 'role'}, "
                       f"the first: {s} {role} {target or ''}".rstrip())  # fmt: skip
    if n == 1:
        return trees[0], 1
    triples = list(dict.fromkeys(t for g in trees for t in g.triples))
    return penman.Graph(triples, top=trees[0].top, metadata=trees[0].metadata), n
