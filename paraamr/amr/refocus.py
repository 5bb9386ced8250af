"""
Re-focusing AMR graphs for paraphrase generation by back-translation.

ParaAMR turns one AMR graph into several linearizations by choosing a
new *focus* (the graph's top, or root) and serializing the same graph
from there: edges that point at the new focus are written inverted
(``:ARG0`` becomes ``:ARG0-of``) so that the PENMAN tree starts at the
focus. The graph itself, i.e. its set of triples, does not change.

Penman 1.3 keeps the tree layout of a decoded graph as epigraphical
markers (:class:`penman.layout.Push` and :data:`penman.layout.POP` in
:attr:`penman.Graph.epidata`). Calling ``penman.encode(g, top=v)`` with
those markers still in place can produce invalid PENMAN (a node
defined twice, one definition without its concept), because the
markers describe a tree rooted at the old top. :func:`refocus`
therefore rebuilds the markers for the new top: the original tree
(the spanning tree the markers describe) is re-rooted at the focus,
which reverses only the edges on the path from the focus to the old
top, and every edge that touches the focus is laid out from the focus.

Example:
    >>> g = refocus('(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))', 'b')
    >>> g.top
    'b'
    >>> print(linearize(g))
    (b / boy :ARG0-of (w / want-01 :ARG1 (g / go-02)) :ARG0-of g)
"""

from __future__ import annotations

import logging
import random
import re

import penman
from penman.exceptions import PenmanError
from penman.graph import CONCEPT_ROLE
from penman.layout import POP, LayoutMarker, Pop, Push
from penman.models.amr import model as amr_model

from paraamr.errors import AMRError, ConfigError
from paraamr.utils import is_whole

__all__ = [
    "AMRError",
    "POLICIES",
    "refocus",
    "candidate_foci",
    "linearize",
]

logger = logging.getLogger(__name__)

#: Names accepted by the ``policy`` argument of :func:`candidate_foci`.
POLICIES = ("all", "no_incoming", "predicates", "random_k", "top")

#: a PropBank frame concept (``want-01``, ``have-rel-role-91``): an event or relation
_FRAME = re.compile(r".+-\d{2}$")

_Triple = tuple[str, str, "str | None"]


# Public API ##################################################################


def refocus(graph: str | penman.Graph, focus: str) -> penman.Graph:
    """
    Return a copy of *graph* whose top is *focus*, laid out from it.

    The result has the same triples as *graph* (the same set; a
    duplicated triple is kept once) and the same metadata. Its layout
    markers (epidata) are rebuilt so that ``penman.encode(result,
    model=penman.models.amr.model)`` writes a tree that starts at
    *focus*:

    * The spanning tree of the original layout (the edges that carry
      :class:`~penman.layout.Push` markers) is re-rooted at *focus*;
      edges on the path from *focus* to the old top now point towards
      their source and are written inverted (``:ARG1-of``).
    * Every other edge that touches *focus* is also written in the
      focus's node, so no edge points to the focus from below:
      incoming ones are inverted.
    * Other re-entrant edges keep the node they were written in.
    * Within a node the concept comes first, then the triples in
      their original order; a former parent, whose triple preceded the
      node in the original graph, therefore comes first.
    * Variables the old markers do not place (e.g. a graph built from
      bare triples) are attached by the first triple, in graph order,
      that links them to the part already laid out.

    Non-layout epidata (alignments) are kept. The input is not
    modified. Strings are decoded with penman's AMR model, which is
    also the model the result is meant to be encoded with.

    Args:
        graph: a :class:`penman.Graph` or a PENMAN string
        focus: the variable to put on top
    Returns:
        A new :class:`penman.Graph` with ``top == focus``.
    Raises:
        AMRError: if *graph* is a string that cannot be decoded, if
            *focus* is not a variable of the graph, or if part of the
            graph is not connected to *focus*, so no single tree can be
            laid out from it.

    Example:
        >>> g = penman.decode(
        ...     '(b / boa :mod (c / constrictor) :ARG0-of (s / swallow-01 :ARG1 (a / animal)))',
        ...     model=amr_model)
        >>> r = refocus(g, 's')
        >>> set(r.triples) == set(g.triples), r.top
        (True, 's')
        >>> print(linearize(r))
        (s / swallow-01 :ARG0 (b / boa :mod (c / constrictor)) :ARG1 (a / animal))
        >>> print(linearize(refocus(g, 'c')))
        (c / constrictor :mod-of (b / boa :ARG0-of (s / swallow-01 :ARG1 (a / animal))))
        >>> refocus(g, 'x')
        Traceback (most recent call last):
        ...
        paraamr.errors.AMRError: focus 'x' is not a variable of the graph (a, b, c, s)
    """
    g = _as_graph(graph)
    variables = g.variables()
    if focus not in variables:
        raise AMRError(f"focus {focus!r} is not a variable of the graph ({_names(variables)})")

    triples = _unique_triples(g)
    n = len(triples)
    is_edge = [role != CONCEPT_ROLE and tgt in variables for _, role, tgt in triples]
    pushes = _original_pushes(g, triples, is_edge)
    contexts = _original_contexts(g, triples, is_edge, pushes)

    # 1. spanning tree rooted at the focus: child variable -> index of its tree triple
    tree_edge = _spanning_tree(focus, triples, is_edge, pushes, variables)

    # 2. node context (the node a triple is written in) of every triple
    child_of: dict[int, str] = {i: child for child, i in tree_edge.items()}
    ctx_triples: dict[str, list[int]] = {v: [] for v in variables}
    for i, (src, _, tgt) in enumerate(triples):
        if not is_edge[i]:
            ctx = src
        elif i in child_of:
            ctx = tgt if child_of[i] == src else src  # the tree parent
        elif focus in (src, tgt):
            ctx = focus
        elif contexts[i] == tgt:
            ctx = tgt  # a re-entrancy written inverted in the original layout
        else:
            ctx = src
        ctx_triples[ctx].append(i)
    for idx in ctx_triples.values():
        idx.sort(key=lambda i: (triples[i][1] != CONCEPT_ROLE, i))

    # 3. emit triples depth first from the focus with fresh Push/POP markers
    order: list[int] = []
    epis: list[list] = [
        [e for e in g.epidata.get(t, ()) if not isinstance(e, LayoutMarker)] for t in triples
    ]
    stack: list[tuple[str, int]] = [(focus, 0)]  # (variable, next position in ctx_triples)
    while stack:
        var, pos = stack.pop()
        idx = ctx_triples[var]
        if pos == len(idx):
            if stack:  # close the node context of var
                epis[order[-1]].append(POP)
            continue
        i = idx[pos]
        stack.append((var, pos + 1))
        order.append(i)
        child = child_of.get(i)
        if child is not None and child != var:
            epis[i].append(Push(child))
            stack.append((child, 0))
    if len(order) != n:  # pragma: no cover - guarded by the connectivity check
        raise AMRError(f"internal error: laid out {len(order)} of {n} triples")

    out = [triples[i] for i in order]
    result = penman.Graph(
        out,
        top=focus,
        epidata={triples[i]: epis[i] for i in order},
        metadata=dict(g.metadata),
    )
    return result


def check_policy(policy: str, k: int | None = None) -> None:
    """Raise :class:`~paraamr.errors.ConfigError` (a ``ValueError``) for an unknown focus policy
    or a *k* that does not fit it.

    >>> check_policy("random_k", 2)
    >>> check_policy("all", 2)
    Traceback (most recent call last):
    ...
    paraamr.errors.ConfigError: focus.k only applies to policy 'random_k', not 'all'
    """
    if policy not in POLICIES:
        raise ConfigError(
            f"focus.policy: unknown policy {policy!r}; expected one of {', '.join(POLICIES)}"
        )
    if policy == "random_k":
        if not is_whole(k, 0):
            raise ConfigError(f"focus.policy 'random_k' needs an integer k >= 0, got {k!r}")
    elif k is not None:
        raise ConfigError(f"focus.k only applies to policy 'random_k', not {policy!r}")


def candidate_foci(
    graph: str | penman.Graph,
    policy: str = "all",
    k: int | None = None,
    seed: int = 0,
) -> list[str]:
    """
    Return the variables of *graph* to try as new focus, in graph order.

    Graph order is the order of the variables' concept (``:instance``)
    triples in ``graph.triples``, which for a decoded graph is the order
    in which nodes are defined in the PENMAN string; a variable without
    a concept triple follows, in the order of its first triple.

    Policies:

    * ``"all"``: every variable except the current top (the ParaAMR
      authors' scripts).
    * ``"no_incoming"``: the variables of ``"all"`` that are the target
      of no edge of the graph, i.e. of no triple ``(s, role, v)`` with
      ``role != ':instance'`` and ``s`` a variable, where triples are
      those of the decoded graph: inverted roles are normalised
      (``(a :ARG0-of b)`` is the edge ``(b :ARG0 a)``). This is
      amrlib's paraphrasing example (``incoming_edge_count(v) == 0``
      over ``pgraph.edges()``); it is empty for a graph whose top is its
      only source node.
    * ``"predicates"``: the variables of ``"all"`` that head an event or
      relation: a PropBank frame concept (a ``-NN`` sense suffix, as
      ``swallow-01``) or an edge to another variable (a node with a
      child, as ``(c / city :name (n / name ...))``); leaves such as
      ``(b / boy)`` or ``(n / name :op1 "Paris")`` are left out.
    * ``"random_k"``: ``min(k, n)`` variables of ``"all"`` (``n`` of
      them) drawn with ``random.Random(seed).sample``; deterministic
      for a given graph and seed, returned in graph order.
    * ``"top"``: the current top alone: generation from the graph as
      parsed, the AMR round trip without re-focusing (the ablation that
      isolates what re-focusing adds).

    Args:
        graph: a :class:`penman.Graph` or a PENMAN string
        policy: one of :data:`POLICIES`
        k: how many variables ``"random_k"`` draws; required for it,
            and must be left ``None`` for the other policies
        seed: the seed of ``"random_k"``
    Returns:
        A list of variables, possibly empty.
    Raises:
        ValueError: for an unknown policy or a bad *k*.
        AMRError: if *graph* is a string that cannot be decoded.

    Example:
        >>> s = '(b / boa :mod (c / constrictor) :ARG0-of (s / swallow-01 :ARG1 (a / animal)))'
        >>> candidate_foci(s)
        ['c', 's', 'a']
        >>> candidate_foci(s, "no_incoming")
        ['s']
        >>> candidate_foci(s, "predicates")
        ['s']
        >>> candidate_foci(s, "random_k", k=2, seed=1)
        ['c', 'a']
        >>> candidate_foci(s, "top")
        ['b']
    """
    check_policy(policy, k)

    g = _as_graph(graph)
    top = g.top
    if policy == "top":
        return [top] if top is not None else []
    candidates = [v for v in _graph_order(g) if v != top]
    if policy == "no_incoming":
        variables = g.variables()
        targets = {t for _, role, t in g.triples if role != CONCEPT_ROLE and t in variables}
        return [v for v in candidates if v not in targets]
    if policy == "predicates":
        variables = g.variables()
        concept = {v: c for v, role, c in g.triples if role == CONCEPT_ROLE}
        heads = {s for s, role, t in g.triples if role != CONCEPT_ROLE and t in variables}
        frames = {v for v, c in concept.items() if c and _FRAME.match(str(c))}
        return [v for v in candidates if v in heads or v in frames]
    if policy == "random_k":
        assert k is not None
        chosen = set(random.Random(seed).sample(candidates, min(k, len(candidates))))
        return [v for v in candidates if v in chosen]
    return candidates


def linearize(graph: str | penman.Graph, *, indent: int | None = None) -> str:
    """
    Return the PENMAN string of *graph* from its top, without metadata.

    The layout recorded in the graph's epidata is used when it is a
    valid tree from the graph's top (as for decoded graphs and the
    output of :func:`refocus`); otherwise (the top was changed by hand,
    triples were added) the layout is rebuilt with :func:`refocus`, so
    the result always decodes back to the same triples and top.
    Encoding uses penman's AMR model.

    Args:
        graph: a :class:`penman.Graph` or a PENMAN string
        indent: ``None`` (default) for a single line with single spaces,
            the form AMR-to-text generators are fed; ``-1`` to align
            nested nodes under their parent; ``n >= 0`` to indent each
            level by *n* spaces (see :func:`penman.encode`)
    Returns:
        The PENMAN string.
    Raises:
        AMRError: if *graph* is a string that cannot be decoded or the
            graph cannot be laid out from its top.

    Example:
        >>> g = penman.decode('# ::snt Dogs bark.\\n(b / bark-01\\n   :ARG0 (d / dog))')
        >>> linearize(g)
        '(b / bark-01 :ARG0 (d / dog))'
        >>> print(linearize(g, indent=3))
        (b / bark-01
           :ARG0 (d / dog))
        >>> g.metadata
        {'snt': 'Dogs bark.'}
    """
    g = _as_graph(graph)
    if g.top is None:
        raise AMRError("cannot linearize an empty graph")
    if not _layout_is_tree(g):
        g = refocus(g, g.top)
    bare = penman.Graph(g.triples, top=g.top, epidata=g.epidata)
    try:
        return penman.encode(bare, indent=indent, model=amr_model)
    except PenmanError as exc:  # pragma: no cover - the layout was checked above
        raise AMRError(f"cannot lay out graph from {g.top!r}: {exc}") from exc


# Helpers #####################################################################


def _as_graph(graph: str | penman.Graph) -> penman.Graph:
    if isinstance(graph, penman.Graph):
        return graph
    if not isinstance(graph, str):
        raise TypeError(f"expected a penman.Graph or a PENMAN string, got {type(graph).__name__}")
    try:
        return penman.decode(graph, model=amr_model)
    except PenmanError as exc:
        raise AMRError(f"cannot decode PENMAN string: {_one_line(exc)}") from exc


def _names(variables: set[str], limit: int = 20) -> str:
    names = sorted(str(v) for v in variables)
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _unique_triples(g: penman.Graph) -> list[_Triple]:
    seen: set[_Triple] = set()
    out: list[_Triple] = []
    for t in g.triples:
        if t in seen:
            logger.debug("duplicate triple kept once: %r", t)  # the builder counts them per graph
            continue
        seen.add(t)
        out.append(t)
    return out


def _graph_order(g: penman.Graph) -> list[str]:
    order = dict.fromkeys(src for src, role, _ in g.triples if role == CONCEPT_ROLE)
    order.update(dict.fromkeys(src for src, _, _ in g.triples))
    if g.top is not None and g.top not in order:
        order[g.top] = None
    return list(order)


def _original_pushes(
    g: penman.Graph, triples: list[_Triple], is_edge: list[bool]
) -> list[str | None]:
    """The variable each triple pushes in the graph's layout, as penman would read it."""
    pushes: list[str | None] = [None] * len(triples)
    pushed: set[str] = set()
    for i, (src, role, tgt) in enumerate(triples):
        if not is_edge[i] or src == tgt:
            continue
        for epi in g.epidata.get((src, role, tgt), ()):
            if isinstance(epi, Push) and epi.variable in (src, tgt):
                if epi.variable not in pushed:
                    pushed.add(epi.variable)
                    pushes[i] = epi.variable
                break
    return pushes


def _original_contexts(
    g: penman.Graph,
    triples: list[_Triple],
    is_edge: list[bool],
    pushes: list[str | None],
) -> list[str | None]:
    """The node each triple is written in by the graph's layout (``None``: unknown)."""
    contexts: list[str | None] = [None] * len(triples)
    stack = [g.top]
    for i, (src, role, tgt) in enumerate(triples):
        if not stack or stack[-1] not in ((src, tgt) if is_edge[i] else (src,)):
            break
        contexts[i] = stack[-1]
        if pushes[i] is not None:
            stack.append(pushes[i])
        for epi in g.epidata.get((src, role, tgt), ()):
            if isinstance(epi, Pop) and stack:
                stack.pop()
    return contexts


def _spanning_tree(
    focus: str,
    triples: list[_Triple],
    is_edge: list[bool],
    pushes: list[str | None],
    variables: set[str],
) -> dict[str, int]:
    """
    Map each variable but *focus* to the index of the triple linking it to its tree parent.

    Edges of the original layout (those with a Push marker) are preferred,
    so the original tree is only re-rooted; remaining variables are
    attached by the first triple (graph order) that reaches them.
    """
    preferred: dict[str, list[tuple[str, int]]] = {v: [] for v in variables}
    for i, (src, _, tgt) in enumerate(triples):
        if pushes[i] is not None:
            preferred[src].append((tgt, i))
            preferred[tgt].append((src, i))

    tree_edge: dict[str, int] = {}
    visited = {focus}

    def flood(start: str) -> None:
        todo = [start]
        while todo:
            var = todo.pop()
            for other, i in preferred[var]:
                if other not in visited:
                    visited.add(other)
                    tree_edge[other] = i
                    todo.append(other)

    flood(focus)
    while len(visited) < len(variables):
        for i, (src, _, tgt) in enumerate(triples):
            if is_edge[i] and (src in visited) != (tgt in visited):
                new = tgt if src in visited else src
                visited.add(new)
                tree_edge[new] = i
                flood(new)
                break
        else:
            raise AMRError(
                f"cannot lay out the graph from {focus!r}: variables not connected to it: "
                f"{_names(variables - visited)}"
            )
    return tree_edge


def _layout_is_tree(g: penman.Graph) -> bool:
    """
    Whether penman can configure *g* from its top in one pass using its markers.

    Mirrors :func:`penman.layout.configure`: each triple must belong to
    the current node context, each Push must open a new, not yet
    defined node at the other end of its triple, and POPs must not
    close the top before the last triple.
    """
    top = g.top
    variables = g.variables()
    if top is None or len(set(g.triples)) != len(g.triples):
        return False
    stack = [top]
    defined = {top}
    last = len(g.triples) - 1
    for i, (src, role, tgt) in enumerate(g.triples):
        edge = role != CONCEPT_ROLE and tgt in variables
        ctx = stack[-1]
        if ctx not in ((src, tgt) if edge else (src,)):
            return False
        for epi in g.epidata.get((src, role, tgt), ()):
            if isinstance(epi, Push):
                other = tgt if ctx == src else src
                if not edge or src == tgt or epi.variable != other or other in defined:
                    return False
                defined.add(other)
                stack.append(other)
        for epi in g.epidata.get((src, role, tgt), ()):
            if isinstance(epi, Pop):
                if len(stack) == 1:
                    if i != last:
                        return False
                else:
                    stack.pop()
    return defined == variables
