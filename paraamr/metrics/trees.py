"""Constituency trees as plain nested tuples, read from Penn-Treebank bracket strings.

A tree is ``(label, children)`` where ``children`` is a tuple of trees; a word leaf is
``(word, ())``. Pure functions only, so trees can be hashed, cached and sent between processes.

>>> t = parse_bracketed("(ROOT (S (NP (PRP I)) (VP (VBP know))))")
>>> t[0], len(t[1])
('ROOT', 1)
>>> to_bracketed(prune(strip_words(t), depth=3))
'(ROOT (S NP VP))'
"""

from __future__ import annotations

import re

from paraamr.errors import ConfigError, TreeError

__all__ = [
    "Tree",
    "parse_bracketed",
    "parse_many",
    "to_bracketed",
    "escape_label",
    "strip_words",
    "prune",
    "clean_ptb",
    "leaves",
    "size",
    "postorder",
]

Tree = tuple  # (label: str, children: tuple[Tree, ...])

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _read(tokens: list[str], pos: int, text: str) -> tuple[Tree, int]:
    """Read one bracketed tree starting at ``tokens[pos] == '('``."""
    if tokens[pos] != "(":
        raise TreeError(f"expected '(' at token {pos} in {text[:80]!r}")
    pos += 1
    if pos >= len(tokens):
        raise TreeError(f"unbalanced brackets in {text[:80]!r}")
    label = ""
    if tokens[pos] not in "()":
        label = tokens[pos]
        pos += 1
    children: list[Tree] = []
    while True:
        if pos >= len(tokens):
            raise TreeError(f"unbalanced brackets in {text[:80]!r}")
        tok = tokens[pos]
        if tok == ")":
            return (label, tuple(children)), pos + 1
        if tok == "(":
            child, pos = _read(tokens, pos, text)
            children.append(child)
        else:
            children.append((tok, ()))
            pos += 1


def parse_many(text: str) -> list[Tree]:
    """Read every top-level tree in ``text`` (e.g. a whole ``.mrg`` file).

    The empty outermost bracket of Penn Treebank files, ``( (S ...) )``, is labelled ``ROOT``
    so that gold trees have the same top as stanza's.

    >>> [t[0] for t in parse_many("( (S (NN a)) ) ( (NP (NN b)) )")]
    ['ROOT', 'ROOT']
    """
    tokens = _tokens(text)
    trees, pos = [], 0
    while pos < len(tokens):
        tree, pos = _read(tokens, pos, text)
        if tree[0] == "":
            tree = ("ROOT", tree[1])
        trees.append(tree)
    return trees


def parse_bracketed(text: str) -> Tree:
    """Read exactly one bracketed tree; raise :class:`TreeError` on anything else.

    >>> parse_bracketed("(NP (DT the) (NN cat))")
    ('NP', (('DT', (('the', ()),)), ('NN', (('cat', ()),))))
    """
    if not isinstance(text, str) or not text.strip():
        raise TreeError("empty tree string")
    trees = parse_many(text)
    if len(trees) != 1:
        raise TreeError(f"expected one tree, found {len(trees)} in {text[:80]!r}")
    if not trees[0][1]:
        raise TreeError(f"tree has no children: {text[:80]!r}")
    return trees[0]


_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-"}


def escape_label(label: str) -> str:
    """PTB escaping so any token can be written in a bracket string.

    >>> escape_label("("), escape_label("a b"), escape_label("")
    ('-LRB-', 'a_b', '_')
    """
    if label in _ESCAPES:
        return _ESCAPES[label]
    label = label.replace("(", "-LRB-").replace(")", "-RRB-")
    return "_".join(label.split()) or "_"


def to_bracketed(tree: Tree) -> str:
    """Write a tree back as a one-line bracket string (nodes without children bare).

    Labels and words are escaped (:func:`escape_label`), so the result always reads back.
    """
    label, children = tree
    if not children:
        return escape_label(label)
    return "(" + escape_label(label) + " " + " ".join(to_bracketed(c) for c in children) + ")"


def is_preterminal(tree: Tree) -> bool:
    return len(tree[1]) == 1 and not tree[1][0][1]


def strip_words(tree: Tree) -> Tree:
    """Drop word leaves, keeping part-of-speech nodes as the new leaves.

    >>> strip_words(parse_bracketed("(NP (DT the) (NN cat))"))
    ('NP', (('DT', ()), ('NN', ())))
    """
    label, children = tree
    return (label, tuple(strip_words(c) for c in children if c[1]))


def prune(tree: Tree, depth: int | None) -> Tree:
    """Keep the nodes at depth <= ``depth``, the outermost bracket being at depth 1.

    ``depth=None`` keeps the whole tree.
    """
    if depth is None:
        return tree
    if depth < 1:
        raise ConfigError("depth must be >= 1 or None")
    label, children = tree
    if depth == 1:
        return (label, ())
    return (label, tuple(prune(c, depth - 1) for c in children))


_FUNCTION_TAG = re.compile(r"^([^-=]+|-[A-Z]+-)(?:[-=].*)?$")


def _base_label(label: str) -> str:
    if label in ("-NONE-", "-LRB-", "-RRB-"):
        return label
    m = _FUNCTION_TAG.match(label)
    return m.group(1) if m else label


def clean_ptb(tree: Tree) -> Tree | None:
    """Normalise a gold Penn Treebank tree the way parsers output it.

    Removes ``-NONE-`` empty elements (and phrases left empty by them) and function tags / indices
    (``NP-SBJ-1`` -> ``NP``). Returns ``None`` when nothing is left.

    >>> to_bracketed(clean_ptb(parse_bracketed("(S (NP-SBJ (-NONE- *)) (VP (VB go)))")))
    '(S (VP (VB go)))'
    """
    label, children = tree
    if not children:
        return tree
    if label == "-NONE-":
        return None
    kept = []
    for c in children:
        cc = clean_ptb(c)
        if cc is not None:
            kept.append(cc)
    if not kept:
        return None
    return (_base_label(label), tuple(kept))


def leaves(tree: Tree) -> list[str]:
    """The words of a tree, left to right."""
    label, children = tree
    if not children:
        return [label]
    out: list[str] = []
    for c in children:
        out.extend(leaves(c))
    return out


def size(tree: Tree) -> int:
    """Number of nodes."""
    return 1 + sum(size(c) for c in tree[1])


def postorder(tree: Tree) -> list[Tree]:
    out: list[Tree] = []
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if done or not node[1]:
            out.append(node)
            continue
        stack.append((node, True))
        for c in reversed(node[1]):
            stack.append((c, False))
    return out
