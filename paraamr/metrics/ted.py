"""Tree edit distance (TED) between constituency parses: TED-3, TED-F and the literature's variants.

Unit costs (insert, delete, relabel = 1), word leaves not counted, part-of-speech nodes counted.
Depth ``k`` keeps the nodes at depth <= k with the outermost bracket at depth 1: TED-3 is
``depth=3`` and TED-F the whole tree.

Two kernels compute the same exact Zhang-Shasha distance:

- ``edist`` (default): the compiled ``edist.ted.standard_ted``; ~1000x faster.
- ``zss``: the pure-Python reference implementation, kept for verification.

>>> tree_edit_distance("(ROOT (S (NP (PRP I)) (VP (VBP know))))",
...                    "(ROOT (S (VP (VB go)) (. .)))")
4
>>> tree_edit_distance("(ROOT (S (NP (PRP I)) (VP (VBP know))))",
...                    "(ROOT (S (VP (VB go)) (. .)))", depth=3)
2
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from paraamr.errors import TreeError
from paraamr.metrics.trees import Tree, parse_bracketed, prune, size, strip_words

__all__ = [
    "TEDVariant",
    "VARIANTS",
    "tree_edit_distance",
    "ted_trees",
    "ted_batch",
    "prepare",
    "zss_distance",
    "edist_distance",
    "to_zss",
    "to_edist",
    "KERNELS",
]


@dataclass(frozen=True)
class TEDVariant:
    """How a TED number is computed. Every field goes into the metric signature.

    Attributes:
        name: preset name.
        wrap_root: add an extra ``ROOT`` node above the parser's tree before cutting.
        drop_root: start from the child of a single-child ``ROOT`` (cut counts from there).
        depth_offset: added to the requested depth (``TED-3`` asks for 3).
        collapse_unary_s: merge ``S`` nodes whose only child is another ``S`` (AESOP-style).
        normalize: ``None`` for raw edit counts, ``"sum"`` to divide by the two trees' node counts.
    """

    name: str
    wrap_root: bool = False
    drop_root: bool = False
    depth_offset: int = 0
    collapse_unary_s: bool = False
    normalize: str | None = None
    note: str = ""

    def describe(self) -> str:
        return self.name


VARIANTS: dict[str, TEDVariant] = {
    v.name: v
    for v in [
        TEDVariant(
            "paraamr",
            note="default: outermost bracket (ROOT) at depth 1, POS nodes counted, words dropped",
        ),
        TEDVariant(
            "paraamr-script",
            wrap_root=True,
            depth_offset=2,
            note="ParaAMR metric script: stanza tree under an extra ROOT node, nodes deeper "
            "than 4 (0-based from the extra node) cut, i.e. one layer more than `paraamr`",
        ),
        TEDVariant(
            "aesop",
            drop_root=True,
            collapse_unary_s=True,
            note="AESOP-style: height counted below ROOT, unary S-over-S chains merged",
        ),
        TEDVariant(
            "qcpg",
            normalize="sum",
            note="QCPG-style: depth 3 (benepar parses in the original), distance divided by "
            "the sum of the two pruned trees' node counts",
        ),
    ]
}


def _collapse_s(tree: Tree) -> Tree:
    label, children = tree
    children = tuple(_collapse_s(c) for c in children)
    while label == "S" and len(children) == 1 and children[0][0] == "S":
        children = children[0][1]
    return (label, children)


def prepare(tree: Tree, depth: int | None, variant: TEDVariant = VARIANTS["paraamr"]) -> Tree:
    """Apply a variant's cut to a full parse (words still attached or not).

    >>> from paraamr.metrics.trees import to_bracketed
    >>> to_bracketed(prepare(parse_bracketed("(ROOT (S (NP (PRP I)) (VP (VBP know))))"), 2))
    '(ROOT S)'
    """
    tree = strip_words(tree)
    if variant.drop_root and tree[0] == "ROOT" and len(tree[1]) == 1:
        tree = tree[1][0]
    if variant.collapse_unary_s:
        tree = _collapse_s(tree)
    if variant.wrap_root:
        tree = ("ROOT", (tree,))
    if depth is not None:
        tree = prune(tree, depth + variant.depth_offset)
    return tree


# --- kernels ---------------------------------------------------------------------------------


def to_zss(t: Tree):
    """Convert to ``zss.Node`` (the reference kernel's tree type)."""
    import zss

    node = zss.Node(t[0])
    for c in t[1]:
        node.addkid(to_zss(c))
    return node


def zss_distance(a: Tree, b: Tree) -> int:
    """Reference kernel: ``zss.simple_distance`` with unit costs on labels."""
    import zss

    return int(zss.simple_distance(to_zss(a), to_zss(b)))


def to_edist(t: Tree) -> tuple[list[str], list[list[int]]]:
    """Pre-order node list and child adjacency lists, edist's tree encoding.

    >>> to_edist(("S", (("NP", ()), ("VP", ()))))
    (['S', 'NP', 'VP'], [[1, 2], [], []])
    """
    nodes: list[str] = []
    adj: list[list[int]] = []
    stack: list[tuple[Tree, int]] = [(t, -1)]
    while stack:
        node, parent = stack.pop()
        idx = len(nodes)
        nodes.append(node[0])
        adj.append([])
        if parent >= 0:
            adj[parent].append(idx)
        stack.extend((c, idx) for c in reversed(node[1]))
    return nodes, adj


def edist_distance(a: Tree, b: Tree) -> int:
    """Compiled kernel: ``edist.ted.standard_ted`` (Zhang-Shasha, unit costs)."""
    from edist.ted import standard_ted

    xa, ya = to_edist(a)
    xb, yb = to_edist(b)
    return int(standard_ted(xa, ya, xb, yb))


KERNELS = {"edist": edist_distance, "zss": zss_distance}
_CONVERT = {"edist": to_edist, "zss": to_zss}


def _native_distance(kernel: str, a, b) -> int:
    if kernel == "edist":
        from edist.ted import standard_ted

        return int(standard_ted(a[0], a[1], b[0], b[1]))
    import zss

    return int(zss.simple_distance(a, b))


def _converted(tree: Tree, kernel: str) -> tuple:
    """A cut tree in the kernel's own format, with its node count (for normalisation)."""
    return _CONVERT[kernel](tree), size(tree)


def _distance(a: tuple, b: tuple, kernel: str, v: TEDVariant) -> float:
    """Distance between two :func:`_converted` trees, normalised as the variant says."""
    d = _native_distance(kernel, a[0], b[0])
    return d / (a[1] + b[1]) if v.normalize == "sum" else d


def ted_batch(
    pairs: list[tuple[str, str]],
    depth3: int = 3,
    variant: str = "paraamr",
    kernel: str = "edist",
) -> list[tuple[float, float] | str]:
    """(TED-depth3, TED-F) for many pairs of bracket strings; each distinct tree is read, cut and
    converted once. A pair with an unreadable tree gives the error message instead.

    >>> ted_batch([("(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))")])
    [(2, 4)]
    """
    v = VARIANTS[variant]
    cache: dict[str, tuple] = {}

    def prepared(text: str) -> tuple:
        if text not in cache:
            t = parse_bracketed(text)
            cache[text] = (
                _converted(prepare(t, depth3, v), kernel),
                _converted(prepare(t, None, v), kernel),
            )
        return cache[text]

    out: list[tuple[float, float] | str] = []
    for a, b in pairs:
        try:
            (a3, af), (b3, bf) = prepared(a), prepared(b)
        except TreeError as e:
            out.append(str(e))
            continue
        out.append((_distance(a3, b3, kernel, v), _distance(af, bf, kernel, v)))
    return out


def ted_trees(
    a: Tree,
    b: Tree,
    *,
    depth: int | None = None,
    variant: str | TEDVariant = "paraamr",
    kernel: str = "edist",
) -> float:
    """TED between two already-read trees (see :func:`tree_edit_distance`)."""
    v = VARIANTS[variant] if isinstance(variant, str) else variant
    return _distance(
        _converted(prepare(a, depth, v), kernel),
        _converted(prepare(b, depth, v), kernel),
        kernel,
        v,
    )


@lru_cache(maxsize=65536)
def _read(text: str) -> Tree:
    return parse_bracketed(text)


def tree_edit_distance(
    tree_a: str,
    tree_b: str,
    *,
    depth: int | None = None,
    variant: str = "paraamr",
    kernel: str = "edist",
) -> float:
    """Tree edit distance between two PTB bracket strings.

    Args:
        tree_a, tree_b: e.g. ``"(ROOT (S (NP (PRP I)) (VP (VBP know))))"``.
        depth: keep nodes at depth <= ``depth`` (outermost bracket = 1); ``None`` = full tree.
        variant: a preset of :data:`VARIANTS` (``paraamr``, ``paraamr-script``, ``aesop``,
            ``qcpg``).
        kernel: ``edist`` (compiled, default) or ``zss`` (reference).

    Returns:
        The edit count (an ``int`` value) or, for normalised variants, a float in [0, 1].

    Raises:
        TreeError: if a string is not one well-formed tree.
    """
    return ted_trees(_read(tree_a), _read(tree_b), depth=depth, variant=variant, kernel=kernel)
