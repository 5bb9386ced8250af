"""TOP intent/slot trees: read, validate, write, compare.

A TOP tree is a bracket string such as
``[IN:GET_EVENT whats there to do [SL:DATE_TIME this weekend ] ]``: an opening bracket is
part of its label token (``[IN:...`` for an intent, ``[SL:...`` for a slot), a closing
bracket is the standalone token ``]``, and every other whitespace-separated token is a word
(a terminal). In memory a tree is a :class:`Node` whose children are words (``str``) or
nodes; nodes are frozen and hashable, so trees can be counted, cached and compared.

Validation (:func:`parse_tree`) rejects, each with a :class:`TopTreeError` whose ``kind``
says which rule broke and whose ``position`` is the 0-based character offset of the
offending token:

=====================  ===========================================================
``kind``               meaning
=====================  ===========================================================
``empty``              no tokens at all
``unbalanced``         a ``[LABEL`` that is never closed, or a ``]`` that closes nothing
``bad_label``          an opening token that is not ``[IN:NAME`` or ``[SL:NAME``
``empty_span``         a node with no children (``[SL:X ]``)
``bracket_in_word``    a word containing ``[`` or ``]`` (``x]``, ``a[b``)
``outside_root``       a word or a second tree before or after the root node
=====================  ===========================================================

**Equality** (exact match): two trees are equal when their canonical strings are equal.
The canonical string (:func:`to_string`) is the tokens joined by single spaces, so trees
that differ only in whitespace (runs of spaces, tabs, leading/trailing blanks) are equal;
everything else counts: labels and words are compared case-sensitively, and word
tokenisation matters (``what 's`` is not ``what's``). A string that is not a valid tree
equals no tree.

>>> t = parse_tree("[IN:GET_EVENT whats on [SL:DATE_TIME this  weekend ] ]")
>>> to_string(t)
'[IN:GET_EVENT whats on [SL:DATE_TIME this weekend ] ]'
>>> utterance(t)
'whats on this weekend'
>>> same_tree(t, "[IN:GET_EVENT whats on [SL:DATE_TIME this weekend ] ]  ")
True
>>> parse_tree("[IN:GET_EVENT whats on [SL:DATE_TIME ] ]")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
paraamr.top.trees.TopTreeError: empty_span: [SL:DATE_TIME has no children (char 23) in ...
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from paraamr.errors import TreeError

__all__ = [
    "Node",
    "TopTreeError",
    "TREE_ERROR_KINDS",
    "MASK",
    "LABEL_PREFIXES",
    "parse_tree",
    "to_string",
    "terminals",
    "utterance",
    "tokenize_utterance",
    "same_tree",
    "canonical",
    "labels",
    "depth",
    "iter_nodes",
]

MASK = "[mask]"
LABEL_PREFIXES = ("IN:", "SL:")
TREE_ERROR_KINDS = (
    "empty",
    "unbalanced",
    "bad_label",
    "empty_span",
    "bracket_in_word",
    "outside_root",
)
_TOKEN = re.compile(r"\S+")
_NAME = re.compile(r"[^\s\[\]]+")
# the TOP trees' word tokens (tokenize_utterance): letters, digits and _ stay together, with a
# '.' between letters (a.m), a '.', ',' or ';' between digits (4.00, 1,000) and an apostrophe
# between letters but before "s" (don't); a number before am/pm is a token of its own; "'s"
# after a letter is a token; every other character is a token of its own
_WORD_TOKEN = re.compile(
    r"""\d+(?=[ap]m\b)
      | \w+(?:(?:(?<=[^\W\d_])\.(?=[^\W\d_]) | (?<=\d)[.,;](?=\d)
               | (?<=[^\W\d_])['’](?!s\b)(?=[^\W\d_]))\w+)*
      | (?:(?<=[^\W\d_])|(?<!\S))['’]s\b
      | \S""",
    re.X | re.I,
)


class TopTreeError(TreeError):
    """A TOP tree string breaks a rule.

    Attributes:
        kind: which rule, one of :data:`TREE_ERROR_KINDS`.
        position: 0-based character offset of the offending token (``None`` for ``empty``).
        text: the string that was read.
    """

    def __init__(self, kind: str, message: str, text: str, position: int | None = None):
        self.kind, self.position, self.text, self.reason = kind, position, text, message
        at = f" (char {position})" if position is not None else ""
        shown = text if len(text) <= 120 else text[:117] + "..."
        super().__init__(f"{kind}: {message}{at} in {shown!r}")


class Node(NamedTuple):
    """One intent or slot: ``label`` like ``IN:GET_EVENT``; children are words or nodes.

    A named tuple: immutable, hashable, equal when label and children are equal.
    """

    label: str
    children: tuple[Node | str, ...]

    @property
    def is_intent(self) -> bool:
        return self.label.startswith("IN:")

    @property
    def is_slot(self) -> bool:
        return self.label.startswith("SL:")

    def __str__(self) -> str:
        return to_string(self)


def _offset(text: str, i: int) -> int:
    """Character offset of the ``i``-th whitespace-separated token of ``text``."""
    for k, m in enumerate(_TOKEN.finditer(text)):
        if k == i:
            return m.start()
    raise IndexError(i)


def parse_tree(text: str, *, masks: bool = False, allow_empty: bool = False) -> Node:
    """Read and validate one TOP tree.

    Args:
        text: the bracket string (any whitespace between tokens).
        masks: accept the token ``[mask]`` as a terminal (template strings).
        allow_empty: accept empty spans (``[SL:X ]``). TOPv2 has 24 such trees in its
            train/eval/test files, e.g. ``remind [SL:PERSON_REMINDED me ]
            [SL:PERSON_REMINDED ] to ...``; TOP v1 has none.

    Returns:
        The root :class:`Node`.

    Raises:
        TopTreeError: the string breaks a rule; ``kind`` and ``position`` say which and where.

    >>> parse_tree("[IN:A x [SL:B y ] ]")
    Node(label='IN:A', children=('x', Node(label='SL:B', children=('y',))))
    >>> parse_tree("[IN:A x [SL:B y ]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    paraamr.top.trees.TopTreeError: unbalanced: [IN:A is never closed (char 0) in '[IN:A x ...'
    >>> parse_tree("[IN:A [mask] ]", masks=True).children
    ('[mask]',)
    """
    toks = text.split()
    if not toks:
        raise TopTreeError("empty", "empty tree string", text)

    def fail(kind: str, message: str, i: int) -> TopTreeError:
        # character offsets are computed only when something is wrong
        return TopTreeError(kind, message, text, _offset(text, i))

    stack: list[tuple[str, int, list]] = []  # (label, token index, children)
    root: Node | None = None
    for i, tok in enumerate(toks):
        if tok == "]":
            if not stack:
                raise fail("unbalanced", "']' closes nothing", i)
            label, opened, children = stack.pop()
            if not children and not allow_empty:
                raise fail("empty_span", f"[{label} has no children", opened)
            node = Node(label, tuple(children))
            if stack:
                stack[-1][2].append(node)
            else:
                root = node
        elif root is not None:
            raise fail("outside_root", f"token {tok!r} after the root node is closed", i)
        elif masks and tok == MASK:
            if not stack:
                raise fail("outside_root", f"{tok!r} outside the root node", i)
            stack[-1][2].append(tok)
        elif tok[0] == "[":
            label = tok[1:]
            if label[:3] not in LABEL_PREFIXES or not _NAME.fullmatch(label, 3):
                raise fail(
                    "bad_label",
                    f"bad label {tok!r}: an opening token must be [IN:NAME or [SL:NAME",
                    i,
                )
            stack.append((label, i, []))
        elif "[" in tok or "]" in tok:
            raise fail(
                "bracket_in_word",
                f"word {tok!r} contains a bracket (brackets must be separate tokens)",
                i,
            )
        elif not stack:
            raise fail("outside_root", f"word {tok!r} outside the root node", i)
        else:
            stack[-1][2].append(tok)
    if stack:
        label, opened, _ = stack[-1]
        raise fail("unbalanced", f"[{label} is never closed", opened)
    assert root is not None
    return root


def _tokens(node: Node, out: list[str]) -> None:
    out.append("[" + node.label)
    for c in node.children:
        if isinstance(c, Node):
            _tokens(c, out)
        else:
            out.append(c)
    out.append("]")


def to_string(node: Node) -> str:
    """The canonical string: tokens joined by single spaces.

    >>> to_string(Node("IN:A", ("x", Node("SL:B", ("y", "z")))))
    '[IN:A x [SL:B y z ] ]'
    """
    out: list[str] = []
    _tokens(node, out)
    return " ".join(out)


def iter_nodes(node: Node) -> Iterator[Node]:
    """Every node, pre-order (root first).

    >>> [n.label for n in iter_nodes(parse_tree("[IN:A [SL:B [IN:C x ] ] [SL:D y ] ]"))]
    ['IN:A', 'SL:B', 'IN:C', 'SL:D']
    """
    yield node
    for c in node.children:
        if isinstance(c, Node):
            yield from iter_nodes(c)


def terminals(node: Node) -> list[str]:
    """The words, left to right.

    >>> terminals(parse_tree("[IN:A how far [SL:B to [IN:C the shop ] ] ]"))
    ['how', 'far', 'to', 'the', 'shop']
    """
    out: list[str] = []
    stack: list[Node | str] = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, Node):
            stack.extend(reversed(x.children))
        else:
            out.append(x)
    return out


def utterance(node: Node) -> str:
    """The utterance the tree annotates: its terminals joined by single spaces.

    >>> utterance(parse_tree("[IN:A how far [SL:B is it ] ]"))
    'how far is it'
    """
    return " ".join(terminals(node))


def tokenize_utterance(text: str) -> list[str]:
    """The words of a raw utterance as the TOP trees have them (TOPv2's ``utterance`` column ->
    its tree's terminals): punctuation split off, ``'s`` and a number before ``am``/``pm`` split
    off, ``don't``, ``a.m``, ``4.00`` and ``10th`` kept whole. On TOPv2 the tokens equal the
    tree's terminals for 99.9% of the rows (all of weather's); TOP v1's tokenizer also keeps
    ``5PM`` and ``WHAT'S`` whole. Tokenized text comes back unchanged.

    >>> " ".join(tokenize_utterance("Is it 6:00 P.M. in hereford? What's Shannon's plan?"))
    "Is it 6 : 00 P.M . in hereford ? What 's Shannon 's plan ?"
    >>> tokenize_utterance("I don't need the 5pm alarm, 4.00am's fine")
    ['I', "don't", 'need', 'the', '5', 'pm', 'alarm', ',', '4.00am', "'s", 'fine']
    """
    return _WORD_TOKEN.findall(text)


def labels(node: Node) -> set[str]:
    """The set of intent and slot labels used in the tree.

    >>> sorted(labels(parse_tree("[IN:A [SL:B [IN:C x ] ] [SL:B y ] ]")))
    ['IN:A', 'IN:C', 'SL:B']
    """
    return {n.label for n in iter_nodes(node)}


def depth(node: Node) -> int:
    """The most nodes open at once: 1 for a flat intent, 2 with a slot, and so on.

    >>> depth(parse_tree("[IN:A x ]")), depth(parse_tree("[IN:A [SL:B [IN:C x ] ] [SL:D y ] ]"))
    (1, 3)
    """
    inner = [depth(c) for c in node.children if isinstance(c, Node)]
    return 1 + max(inner, default=0)


def canonical(tree: Node | str) -> str:
    """Canonical string of a tree or of a tree string (validated; raises on a bad string).

    >>> canonical("  [IN:A   x ]\\n")
    '[IN:A x ]'
    """
    return to_string(tree if isinstance(tree, Node) else parse_tree(tree))


def same_tree(a: Node | str | None, b: Node | str | None) -> bool:
    """Exact match: equal canonical strings. A string that is not a valid tree, or ``None``,
    equals nothing (not even another invalid string).

    >>> same_tree("[IN:A x ]", "[IN:A  x ]"), same_tree("[IN:A x ]", "[IN:A X ]")
    (True, False)
    >>> same_tree("[IN:A x", "[IN:A x")
    False
    """
    try:
        if a is None or b is None:
            return False
        return canonical(a) == canonical(b)
    except TopTreeError:
        return False
