"""Tree edit distance (TED) between constituency parses: TED-3, TED-F and the literature's variants.

Unit costs (insert, delete, relabel = 1), word leaves not counted, part-of-speech nodes counted.
TED-F is the whole tree; TED-3 is ``depth=3``, whose meaning is each preset's original's
(:data:`VARIANTS`; tested equal to the original code on real Penn Treebank pairs):

- ``paraamr`` (default) and ``paraamr-script``: the ParaAMR authors' TED script. It walks the
  parser's tree from its ``ROOT`` (``d = 0``) and stops when ``d > 4``: ROOT, the node below it
  (``S``) and three levels below that. ``depth=k`` keeps ``d <= k + 1``.
- ``root-depth`` (``paraamr`` before v2): nodes at depth <= k, the outermost bracket at depth 1.
- ``aesop``: AESOP's ``trim_str(height=k)`` (ROOT at height 1), then every ``S`` node replaced by
  its children under one fresh ``S`` (TED-F: the same splice on the whole tree).
- ``qcpg``: QCPG's ``normalize_tree(max_depth=k)`` on benepar strings, which have no ROOT
  bracket: a top ROOT with one child is dropped, then ``d <= k`` with ``d = 0`` at the new top;
  the distance is divided by the two cut trees' node counts.

Two kernels compute the same exact Zhang-Shasha distance:

- ``edist`` (default): the compiled ``edist.ted.standard_ted``; ~1000x faster.
- ``zss``: the pure-Python reference implementation, kept for verification.

>>> a = "(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it))))))"
>>> b = "(ROOT (S (NP (PRP It)) (VP (VBD slept))))"
>>> tree_edit_distance(a, b), tree_edit_distance(a, b, depth=3)
(6, 5)
>>> tree_edit_distance(a, b, depth=3, variant="root-depth")
0
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from paraamr.errors import TreeError
from paraamr.metrics.trees import Tree, parse_bracketed, prune, size, strip_words

__all__ = [
    "TEDVariant",
    "VARIANTS",
    "variant_names",
    "variant_name",
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
    """How a TED number is computed. Its :meth:`describe` (name and version) goes into the
    metric signature; the version changes whenever the preset's definition changes.

    A tree is prepared in this order: words dropped (part-of-speech nodes become the leaves),
    ``drop_root``, the depth cut, ``splice``, ``wrap``.

    Attributes:
        name: preset name.
        version: definition version (``paraamr`` v1 is ``root-depth``).
        drop_root: start from the only child of a top ``ROOT`` node (benepar-style trees).
        depth_offset: the cut keeps nodes at depth <= ``depth + depth_offset``, the top of the
            tree (after ``drop_root``) at depth 1.
        splice: labels of nodes replaced by their children (AESOP: ``S`` and unlabelled nodes).
        wrap: label of a fresh node put above the tree (after the cut and the splice).
        normalize: ``None`` for raw edit counts, ``"sum"`` to divide by the two trees' node counts.
        note: one line for the README and ``--help``.
    """

    name: str
    version: int = 1
    drop_root: bool = False
    depth_offset: int = 0
    splice: frozenset[str] = frozenset()
    wrap: str | None = None
    normalize: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.splice and self.wrap is None:
            raise ValueError(f"TED variant {self.name!r}: splice needs a wrap node")

    def describe(self) -> str:
        """``name-vN``, the TED part of the signature.

        >>> VARIANTS["paraamr"].describe()
        'paraamr-v2'
        """
        return f"{self.name}-v{self.version}"


VARIANTS: dict[str, TEDVariant] = {
    v.name: v
    for v in [
        TEDVariant(
            "paraamr",
            version=2,
            depth_offset=2,
            note="default, the ParaAMR authors' TED script: the parser's ROOT, the node below it "
            "and `depth` levels below that (d <= depth + 1, d = 0 at ROOT); POS nodes kept, "
            "words dropped",
        ),
        TEDVariant(
            "paraamr-script",
            version=2,
            depth_offset=2,
            wrap="ROOT",
            note="the authors' script built literally: `paraamr` under the script's extra ROOT "
            "node (same distances: a common top node never changes a tree edit distance)",
        ),
        TEDVariant(
            "root-depth",
            note="`paraamr` v1: nodes at depth <= `depth`, the outermost bracket (ROOT) at depth 1",
        ),
        TEDVariant(
            "aesop",
            version=2,
            splice=frozenset({"S", ""}),
            wrap="S",
            note="AESOP's eval_utils: cut at height `depth` (ROOT at 1; AESOP cuts only for 3), "
            "then every S (and unlabelled) node replaced by its children under a fresh S",
        ),
        TEDVariant(
            "qcpg",
            version=2,
            drop_root=True,
            depth_offset=1,
            normalize="sum",
            note="QCPG's syntdiv_metric on benepar-style trees: a single-child ROOT dropped, "
            "max_depth=`depth` from 0 at the new top, distance / sum of the two cut trees' "
            "node counts",
        ),
    ]
}


def variant_names() -> list[str]:
    """Every name a TED variant answers to: its preset name and the ``name-vN`` that
    signatures print (``ted:paraamr-v2``).

    >>> [n for n in variant_names() if n.startswith("paraamr")]
    ['paraamr', 'paraamr-script', 'paraamr-script-v2', 'paraamr-v2']
    """
    return sorted({*VARIANTS, *(v.describe() for v in VARIANTS.values())})


def variant_name(name: str) -> str:
    """The preset name of ``name``, which may be the ``name-vN`` a signature printed.

    >>> variant_name("paraamr-v2"), variant_name("root-depth")
    ('paraamr', 'root-depth')
    """
    for v in VARIANTS.values():
        if name in (v.name, v.describe()):
            return v.name
    raise ValueError(f"unknown TED variant {name!r}; known: {', '.join(variant_names())}")


def _spliced(tree: Tree, labels: frozenset[str]) -> list[Tree]:
    """``tree`` with every node labelled in ``labels`` replaced by its children (a forest).

    >>> _spliced(("S", (("NP", ()), ("S", (("VP", ()),)))), frozenset({"S"}))
    [('NP', ()), ('VP', ())]
    """
    label, children = tree
    kids = tuple(k for c in children for k in _spliced(c, labels))
    return list(kids) if label in labels else [(label, kids)]


def prepare(tree: Tree, depth: int | None, variant: TEDVariant = VARIANTS["paraamr"]) -> Tree:
    """Apply a variant's cut to a full parse (with its words: they are dropped here).

    >>> from paraamr.metrics.trees import to_bracketed
    >>> t = parse_bracketed("(ROOT (S (NP (PRP I)) (VP (VBP know))))")
    >>> to_bracketed(prepare(t, 1)), to_bracketed(prepare(t, 1, VARIANTS["root-depth"]))
    ('(ROOT (S NP VP))', 'ROOT')
    """
    return _cut(strip_words(tree), depth, variant)


def _cut(tree: Tree, depth: int | None, variant: TEDVariant) -> Tree:
    """:func:`prepare` on a tree whose words are already dropped."""
    if variant.drop_root and tree[0] == "ROOT" and len(tree[1]) == 1:
        tree = tree[1][0]
    if depth is not None:
        tree = prune(tree, depth + variant.depth_offset)
    if variant.splice:
        return (variant.wrap, tuple(_spliced(tree, variant.splice)))
    if variant.wrap is not None:
        tree = (variant.wrap, (tree,))
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
    converted = _CONVERT[kernel](tree)
    return converted, len(converted[0]) if kernel == "edist" else size(tree)


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
    converted once, and TED-3 reuses TED-F when the cut left both trees whole. A pair with an
    unreadable tree gives the error message instead.

    >>> ted_batch([("(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))")])
    [(4, 4)]
    """
    v = VARIANTS[variant]
    cache: dict[str, tuple] = {}

    def prepared(text: str) -> tuple:
        if text not in cache:
            t = strip_words(parse_bracketed(text))
            cache[text] = (
                _converted(_cut(t, depth3, v), kernel),
                _converted(_cut(t, None, v), kernel),
            )
        return cache[text]

    out: list[tuple[float, float] | str] = []
    for a, b in pairs:
        try:
            (a3, af), (b3, bf) = prepared(a), prepared(b)
        except TreeError as e:
            out.append(str(e))
            continue
        full = _distance(af, bf, kernel, v)
        # a cut that removed nothing from either tree (equal node counts) gives the same trees
        uncut = a3[1] == af[1] and b3[1] == bf[1]
        out.append((full if uncut else _distance(a3, b3, kernel, v), full))
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
        tree_a: a PTB bracket string, e.g. ``"(ROOT (S (NP (PRP I)) (VP (VBP know))))"``.
        tree_b: the other tree, in the same form.
        depth: ``None`` = the full tree (TED-F); ``k`` cuts the tree as the preset's original
            does at ``k`` (TED-3 is ``k = 3``), ``d`` counting from 0 at the outermost bracket:

            - ``paraamr``, ``paraamr-script``: ``d <= k + 1`` (ROOT, the node below it and
              ``k`` levels below that; the authors' script stops at ``d > 4``);
            - ``root-depth``: ``d <= k - 1`` (outermost bracket at depth 1, depth <= ``k``);
            - ``aesop``: ``d <= k - 1`` (AESOP's ``trim_str`` height, ROOT at height 1), then
              ``S`` nodes spliced out;
            - ``qcpg``: a single-child ROOT dropped first, then ``d <= k`` from the new top
              (QCPG's ``max_depth``).
        variant: a preset of :data:`VARIANTS` (``paraamr``, ``paraamr-script``, ``root-depth``,
            ``aesop``, ``qcpg``).
        kernel: ``edist`` (compiled, default) or ``zss`` (reference).

    Returns:
        The edit count (an ``int`` value) or, for normalised variants, a float in [0, 1].

    Raises:
        TreeError: if a string is not one well-formed tree.
    """
    return ted_trees(_read(tree_a), _read(tree_b), depth=depth, variant=variant, kernel=kernel)
