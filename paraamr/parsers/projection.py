"""Project a spaCy dependency parse onto a Penn-Treebank-like phrase-structure tree.

Placeholder; rules are documented below once stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from spacy.tokens import Span, Token

__all__ = ["Tree", "project_sentence"]

Tree = tuple  # (label: str, children: tuple[Tree, ...]); a word leaf is (word, ())

_VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"})
_FINITE_TAGS = frozenset({"VBD", "VBP", "VBZ", "MD"})
_NOUN_TAGS = frozenset(
    {"NN", "NNS", "NNP", "NNPS", "PRP", "PRP$", "EX", "WP", "WP$", "WDT", "DT", "PDT", "CD"}
    | {"$", "#", "FW", "ADD", "XX", "GW", "NFP", "SYM"}
)
_LABEL_BY_TAG = {
    **{t: "ADJP" for t in ("JJ", "JJR", "JJS", "AFX", "VBN", "VBG")},
    **{t: "ADVP" for t in ("RB", "RBR", "RBS", "WRB")},
    **{t: "PP" for t in ("IN", "TO")},
    "RP": "PRT",
    "UH": "INTJ",
    "LS": "LST",
}
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_PUNCT_TAGS = frozenset({".", ",", ":", "``", "''", "-LRB-", "-RRB-", "HYPH"})
_SUBJ = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_AUX = frozenset({"aux", "auxpass"})
_COORD = frozenset({"conj", "cc", "preconj"})
# Relations realised as a bare part-of-speech node when the dependent has no dependents.
_LEAF_DEPS = frozenset({"punct", "cc", "preconj", "neg", "aux", "auxpass", "mark", "case", "det"})
_LEAF_DEPS |= {"predet"}
# Relations always realised as a phrase, even for a single word.
_PHRASAL = frozenset(
    {"prep", "pobj", "dobj", "nsubj", "nsubjpass", "attr", "dative", "appos", "relcl", "acl"}
    | {"advcl", "ccomp", "xcomp", "pcomp", "csubj", "csubjpass", "oprd", "agent", "acomp"}
    | {"parataxis", "intj", "expl", "conj"}
)
# Right dependents of a noun that stay inside its base NP.
_NP_BASE_RIGHT = frozenset({"nummod", "compound", "case", "nmod", "det", "poss", "quantmod"})
_FLATTEN = frozenset({"compound", "nmod"})
_NON_CLAUSAL = frozenset({"amod", "compound", "nmod", "nummod", "poss", "det", "case", "prep"})
_NOMINAL_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "dative", "appos"})
_NOMINAL_DEPS |= {"npadvmod", "poss", "expl"}
_ADJ_TAGS = frozenset({"JJ", "JJR", "JJS", "AFX", "VBN", "VBG"})
_CLAUSAL_DEPS = frozenset({"csubj", "csubjpass", "advcl", "ccomp", "xcomp", "parataxis", "conj"})
_BE = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m"})
_CLAUSES = frozenset({"S", "SBAR", "SINV", "SQ", "SBARQ", "VP"})
_PTB_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}

Kids = dict  # token index -> list of dependent tokens inside the sentence


@dataclass
class _Item:
    """A child being placed: its token span (for ordering and punctuation) and its tree."""

    lo: int
    hi: int
    tree: Tree
    parts: tuple[_Item, ...] = ()  # the child items a rendered phrase was built from
    role: str = ""  # the dependency relation the item realises


@dataclass
class _Level:
    """One phrase node of a head's projection; the next inner level is its implicit child."""

    label: str
    items: list[_Item] = field(default_factory=list)


def _leaf(tok: Token) -> _Item:
    word = _PTB_ESCAPES.get(tok.text, tok.text.replace(" ", "_"))
    return _Item(tok.i, tok.i, (tok.tag_ or tok.pos_ or "XX", ((word, ()),)))


def _is_punct(tok: Token, kids: Kids) -> bool:
    return (tok.dep_ == "punct" or tok.tag_ in _PUNCT_TAGS) and not kids[tok.i]


def _phrase_label(tok: Token) -> str:
    if tok.dep_ in _NOMINAL_DEPS and tok.tag_ not in _LABEL_BY_TAG.keys() - _ADJ_TAGS:
        return "NP"
    if tok.tag_ == "CD" and tok.dep_ in ("nummod", "quantmod"):
        return "QP"
    if tok.dep_ == "advmod" and tok.tag_ not in _NOUN_TAGS:
        return "ADVP"
    if tok.dep_ in ("prep", "agent"):
        return "PP"
    if tok.tag_ in _NOUN_TAGS:
        return "NP"
    return _LABEL_BY_TAG.get(tok.tag_, "X")


def _is_clausal(tok: Token, kids: Kids) -> bool:
    if tok.dep_ in _NON_CLAUSAL or tok.dep_ in _AUX:
        return False
    if tok.tag_ in _VERB_TAGS:
        return True
    deps = {d.dep_ for d in kids[tok.i]}
    return bool(deps & _SUBJ) and bool(deps & _AUX)


def _span(items: list[_Item]) -> tuple[int, int]:
    return min(i.lo for i in items), max(i.hi for i in items)


def _subtree_leaves(tok: Token, kids: Kids) -> list[_Item]:
    out = [_leaf(tok)]
    for d in kids[tok.i]:
        out.extend(_subtree_leaves(d, kids))
    return out


def _items(dep: Token, kids: Kids, clause: bool) -> list[_Item]:
    """How dependent ``dep`` appears among its head's children (one item or flat leaves)."""
    if not clause and dep.dep_ in _FLATTEN:
        return _subtree_leaves(dep, kids)
    if not kids[dep.i] and (dep.dep_ in _LEAF_DEPS or (not clause and dep.dep_ not in _PHRASAL)):
        return [_leaf(dep)]
    item = _constituent(dep, kids)
    if dep.dep_ in ("advcl", "ccomp") and item.tree[0] not in _CLAUSES:  # verbless clause
        marked = any(k.dep_ == "mark" for k in kids[dep.i])
        item = _join("SBAR" if marked else "S", [item])
    items = _lift_edges(item)
    return [it if _is_punct_leaf(it.tree) else replace(it, role=dep.dep_) for it in items]


def _is_punct_leaf(tree: Tree) -> bool:
    return len(tree[1]) == 1 and not tree[1][0][1] and tree[0] in _PUNCT_TAGS


def _lift_edges(item: _Item) -> list[_Item]:
    """Move punctuation at the edges of a clause out to its parent; bracket a PRN."""
    label, parts = item.tree[0], list(item.parts)
    if label in _CLAUSES and len(parts) > 1:
        a, b = 0, len(parts)
        while a < b - 1 and _is_punct_leaf(parts[a].tree):
            a += 1
        while b > a + 1 and _is_punct_leaf(parts[b - 1].tree):
            b -= 1
        if (a, b) != (0, len(parts)):
            return parts[:a] + [_join(label, parts[a:b])] + parts[b:]
    if len(parts) > 2 and parts[0].tree[0] == "-LRB-" and parts[-1].tree[0] == "-RRB-":
        inner = parts[1] if len(parts) == 3 else _join(label, parts[1:-1])
        return [_join("PRN", [parts[0], inner, parts[-1]])]
    return [item]


def _join(label: str, parts: list[_Item]) -> _Item:
    parts = _parentheticals(parts)
    lo, hi = _span(parts)
    return _Item(lo, hi, (label, tuple(p.tree for p in parts)), tuple(parts))


def _parentheticals(parts: list[_Item]) -> list[_Item]:
    """``, S ,`` around a parenthetical clause (spaCy ``parataxis``) becomes ``PRN(, S ,)``."""
    for k in range(1, len(parts) - 1):
        a, mid, b = parts[k - 1 : k + 2]
        if mid.role == "parataxis" and a.tree[0] in (",", ":") and b.tree[0] == a.tree[0]:
            prn = _Item(a.lo, b.hi, ("PRN", (a.tree, mid.tree, b.tree)), (a, mid, b))
            return parts[: k - 1] + [prn] + _parentheticals(parts[k + 2 :])
    return parts


def _render(levels: list[_Level]) -> _Item:
    """Build the nested tree of ``levels`` (outermost first)."""
    inner: _Item | None = None
    for level in reversed(levels):
        items = level.items + ([inner] if inner else [])
        inner = _join(level.label, sorted(items, key=lambda i: (i.lo, i.hi)))
    assert inner is not None
    return inner


def _place_punct(levels: list[_Level], puncts: list[Token]) -> None:
    """Put each punctuation mark in the deepest level whose other material surrounds it."""
    spans: list[tuple[int, int] | None] = []
    lo_hi: tuple[int, int] | None = None
    for level in reversed(levels):
        if level.items:
            lo, hi = _span(level.items)
            lo_hi = (lo, hi) if lo_hi is None else (min(lo, lo_hi[0]), max(hi, lo_hi[1]))
        spans.append(lo_hi)
    spans.reverse()
    for p in puncts:
        target = levels[0]
        for level, sp in zip(levels, spans, strict=True):
            if sp is not None and sp[0] < p.i < sp[1]:
                target = level
        target.items.append(_leaf(p))


def _conj_chain(tok: Token, kids: Kids) -> list[Token]:
    out: list[Token] = []
    for d in kids[tok.i]:
        if d.dep_ == "conj":
            out.append(d)
            out.extend(_conj_chain(d, kids))
    return out


def _own_deps(tok: Token, kids: Kids, coord: bool) -> tuple[list[Token], list[Token]]:
    """Non-punctuation and punctuation dependents of ``tok``, conjuncts excluded.

    Conjunction words (:func:`_is_extra`) are excluded too when ``tok`` takes part in a
    coordination (``coord``).
    """
    deps = [d for d in kids[tok.i] if d.dep_ != "conj" and not (coord and _is_extra(d, tok))]
    punct = [d for d in deps if _is_punct(d, kids)]
    return [d for d in deps if d not in punct], punct


def _is_extra(dep: Token, head: Token) -> bool:
    """A conjunction word placed at the coordination level (a ``cc`` after its head)."""
    return dep.dep_ == "preconj" or (dep.dep_ == "cc" and dep.i > head.i)


def _has_subject(tok: Token, kids: Kids) -> bool:
    return any(d.dep_ in _SUBJ for d in kids[tok.i])


def _is_wh(dep: Token, kids: Kids) -> str | None:
    """The WH label if ``dep`` is a fronted wh-phrase, else ``None``."""
    if dep.dep_ in _CLAUSAL_DEPS:
        return None
    if dep.tag_ in _WH_TAGS or dep.left_edge.tag_ in _WH_TAGS:
        return "WHADVP" if dep.tag_ == "WRB" else "WHNP"
    if dep.dep_ == "prep" and any(k.left_edge.tag_ in _WH_TAGS for k in kids[dep.i]):
        return "WHPP"
    return None


def _relabel(item: _Item, label: str | None) -> _Item:
    """Give a phrase a new label (a bare part-of-speech node is wrapped instead)."""
    if label is None:
        return item
    if not item.parts:
        return _join(label, [item])
    return _join(label, list(item.parts))


def _sbar_front(deps: list[Token], first: int, kids: Kids) -> list[_Item]:
    """Complementizer / wh-phrase items (and anything before them) of a subordinate clause."""
    front = [d for d in deps if d.i < first]
    cut = max((d.i for d in front if d.dep_ == "mark" or _is_wh(d, kids)), default=-1)
    out: list[_Item] = []
    for d in front:
        if d.i <= cut:
            wh = _is_wh(d, kids) if d.dep_ != "mark" else None
            out.extend(_relabel(it, wh) for it in _items(d, kids, clause=True))
    return out


def _subjects(v: Token, deps: list[Token], first: int) -> list[Token]:
    """Subjects of ``v``; in ``On the list were X`` the post-verbal ``attr`` counts as one."""
    subj = [d for d in deps if d.dep_ in _SUBJ]
    if subj or v.dep_ != "ROOT" or v.lower_ not in _BE or not any(d.i < first for d in deps):
        return subj
    return [d for d in deps if d.dep_ == "attr" and d.i > v.i][:1]


def _clause_levels(
    v: Token, kids: Kids, vp_only: bool, coord: bool
) -> tuple[list[_Level], list[Token]]:
    """Levels SBAR? > S|SINV|SQ > VP ... > VP for a verbal head (auxiliaries nest VPs)."""
    deps, puncts = _own_deps(v, kids, coord)
    spine = sorted((d for d in deps if d.dep_ in _AUX and d.i < v.i and not kids[d.i]), key=_idx)
    spine.append(v)
    deps = [d for d in deps if d not in spine]
    first = spine[0].i
    subj = _subjects(v, deps, first)
    subj_i = min((s.i for s in subj), default=first)
    inverted = bool(subj) and subj_i > first
    question = v.dep_ == "ROOT" and any(p.text == "?" for p in puncts)

    front: list[_Item] = []
    if (v.dep_ != "ROOT" or question) and not vp_only:
        front = _sbar_front(deps, first, kids)
        cut = max((it.hi for it in front), default=-1)
        deps = [d for d in deps if d.i > cut]

    vps = [_Level("VP", [_leaf(s)]) for s in spine]
    label = "SQ" if question and (inverted or front) else "SINV" if inverted else "S"
    top = _Level(label)
    for d in deps:
        items = _items(d, kids, clause=True)
        k = max(j for j, s in enumerate(spine) if s.i < d.i or j == 0)
        if d.i < first or d in subj or (inverted and d.i > subj_i and k == 0):
            top.items.extend(items)
            if d in subj and not inverted:
                puncts = _absorb_comma(d, items[0], top, puncts)
        else:
            vps[k].items.extend(items)
    if label == "SQ" and inverted:  # the fronted auxiliary is a child of SQ
        top.items.extend(vps.pop(0).items)
    if vp_only:  # no S level: whatever would go there stays in the outer VP
        vps[0].items.extend(top.items)
    levels = [] if vp_only else _split_colon(top, puncts, min(subj_i, first))
    levels += vps
    if front or _wants_sbar(v, spine):
        levels.insert(0, _Level("SBARQ" if question else "SBAR", front))
    return levels, puncts


def _absorb_comma(subj: Token, item: _Item, top: _Level, puncts: list[Token]) -> list[Token]:
    """A comma closing a subject that has an inner comma (an appositive) joins the subject."""
    if not item.parts or not any(t.tag_ == "," for t in subj.subtree):
        return puncts
    comma = next((p for p in puncts if p.tag_ == "," and p.i == subj.right_edge.i + 1), None)
    if comma is None:
        return puncts
    top.items[top.items.index(item)] = _join(item.tree[0], [*item.parts, _leaf(comma)])
    return [p for p in puncts if p is not comma]


def _split_colon(top: _Level, puncts: list[Token], limit: int) -> list[_Level]:
    """``S : NP VP`` becomes ``S(S : S(NP VP))`` when a clause precedes a fronted colon."""
    colon = next((p for p in reversed(puncts) if p.tag_ == ":" and p.i < limit), None)
    if colon is None or not any(
        it.hi < colon.i and it.tree[0] in ("S", "SBAR", "SINV") for it in top.items
    ):
        return [top]
    puncts.remove(colon)
    before = [it for it in top.items if it.hi < colon.i]
    inner = _Level("S", [it for it in top.items if it.hi > colon.i])
    return [_Level(top.label, [*before, _leaf(colon)]), inner]


def _idx(tok: Token) -> int:
    return tok.i


def _wants_sbar(v: Token, spine: list[Token]) -> bool:
    if v.dep_ == "relcl":
        return True
    if v.dep_ != "ccomp" or v.i < v.head.i or spine[0].tag_ not in _FINITE_TAGS:
        return False
    edge = v.left_edge
    before = v.doc[edge.i - 1] if edge.i > 0 else edge
    return not (edge.is_punct or before.is_punct)  # quoted speech is a bare S


def _phrase_levels(tok: Token, kids: Kids, coord: bool) -> tuple[list[_Level], list[Token]]:
    """Levels for a non-verbal head: NP gets an outer NP over post-modifiers."""
    deps, puncts = _own_deps(tok, kids, coord)
    label = _phrase_label(tok)
    base = _Level(label, [_leaf(tok)])
    outer = _Level(label)
    for d in deps:
        into = base
        if label == "NP" and d.i > tok.i and d.dep_ not in _NP_BASE_RIGHT:
            into = outer
        into.items.extend(_items(d, kids, clause=False))
    return ([outer, base] if outer.items else [base]), puncts


def _levels(tok: Token, kids: Kids, coord: bool, member: bool) -> tuple[list[_Level], list[Token]]:
    if _is_clausal(tok, kids):
        has_subj = _has_subject(tok, kids)
        vp_only = (tok.dep_ == "acl" and tok.tag_ in ("VBG", "VBN")) or member
        return _clause_levels(tok, kids, vp_only and not has_subj, coord)
    return _phrase_levels(tok, kids, coord)


def _coordinate(tok: Token, kids: Kids, levels: list[_Level], chain: list[Token]) -> list[Token]:
    """Add a coordination level (or flat conjuncts) to ``levels``; return punctuation to lift."""
    lifted: list[Token] = []
    extras = [d for m in [tok, *chain] for d in kids[m.i] if _is_extra(d, m)]
    coord_items = [it for d in extras for it in _subtree_leaves(d, kids)]
    if all(not _own_deps(m, kids, True)[0] for m in chain):  # single words: flat
        for m in chain:
            lifted.extend(_own_deps(m, kids, True)[1])
        levels[-1].items.extend(coord_items + [_leaf(m) for m in chain])
        return lifted
    coord_items += [_member(m, kids, lifted) for m in chain]
    labels = [lv.label for lv in levels]
    at = 0
    if "VP" in labels and not all(_has_subject(m, kids) for m in chain):
        has_aux = any(d.dep_ in _AUX for m in chain for d in kids[m.i])
        at = labels.index("VP") if has_aux else len(labels) - 1
    elif "S" in labels or "SINV" in labels:
        at = labels.index("S" if "S" in labels else "SINV")
        coord_items += _shared_front(levels[at])
    levels.insert(at, _Level(levels[at].label, coord_items))
    return lifted


def _shared_front(s_level: _Level) -> list[_Item]:
    """Remove and return the items before the subject: in ``PP , S , CC S`` they scope over
    all the coordinated clauses."""
    subj = [it.lo for it in s_level.items if it.role in _SUBJ]
    if not subj:
        return []
    front = [it for it in s_level.items if it.hi < min(subj)]
    s_level.items = [it for it in s_level.items if it not in front]
    return front


def _member(m: Token, kids: Kids, lifted: list[Token]) -> _Item:
    """A non-first conjunct; its punctuation outside its own material joins ``lifted``."""
    levels, puncts = _levels(m, kids, coord=True, member=True)
    lo, hi = _span([it for lv in levels for it in lv.items])
    lifted.extend(p for p in puncts if not lo < p.i < hi)
    _place_punct(levels, [p for p in puncts if lo < p.i < hi])
    return _render(levels)


def _constituent(tok: Token, kids: Kids) -> _Item:
    """The full projection of ``tok`` with all its dependents."""
    chain = _conj_chain(tok, kids)
    levels, puncts = _levels(tok, kids, coord=bool(chain), member=False)
    if chain:
        puncts = puncts + _coordinate(tok, kids, levels, chain)
    _place_punct(levels, puncts)
    return _render(levels)


def _attachment(tok: Token, start: int, end: int) -> Token | None:
    """The head ``tok`` hangs from in the projection, ``None`` for a root of the span.

    Whitespace tokens and auxiliaries are skipped: their dependents go to their own head.
    """
    head = tok.head
    for _ in range(end - start):
        if head.i == tok.i or not start <= head.i < end:
            return None
        if not (head.is_space or head.dep_ in _AUX) or head.head.i == head.i:
            return None if head.is_space else head
        head = head.head
    return None


def _dependents(sent: Span) -> tuple[Kids, list[Token]]:
    """Children lists inside the span (see :func:`_attachment`) and the span's roots.

    With a single root, punctuation closing the sentence (and an opening quote) hangs from it.
    """
    kids: Kids = {t.i: [] for t in sent}
    roots: list[Token] = []
    heads: dict[int, Token | None] = {}
    for tok in sent:
        if not tok.is_space:
            heads[tok.i] = _attachment(tok, sent.start, sent.end)
            if heads[tok.i] is None:
                roots.append(tok)
    if len(roots) == 1:
        words = [t for t in sent if not t.is_space]
        edges = [w for w in _edge_run(reversed(words)) if w.tag_ in _PUNCT_TAGS - {","}]
        edges += [w for w in _edge_run(words) if w.tag_ == "``"]
        for w in edges:
            if w is not roots[0] and not any(heads[t.i] == w for t in words):
                heads[w.i] = roots[0]
    for tok in sent:
        head = heads.get(tok.i)
        if head is not None:
            kids[head.i].append(tok)
    return kids, roots


def _edge_run(words: Iterable[Token]) -> list[Token]:
    out = []
    for w in words:
        if not w.is_punct:
            break
        out.append(w)
    return out


def project_sentence(sent: Span) -> Tree:
    """Project the dependency parse of one sentence onto a PTB-like constituency tree.

    Args:
        sent: a spaCy ``Span`` (e.g. an item of ``doc.sents`` or ``doc[:]``) from a pipeline with
            a tagger and a dependency parser.

    Returns:
        A tuple tree ``("ROOT", (top,))`` whose preterminals are spaCy's fine-grained tags and
        whose leaves are the words (brackets written ``-LRB-`` etc.).

    Raises:
        ValueError: if the span holds no token other than whitespace.
    """
    kids, roots = _dependents(sent)
    if not roots:
        raise ValueError("cannot project an empty sentence")
    try:
        tops = sorted((_constituent(r, kids) for r in roots), key=lambda i: i.lo)
    except RecursionError:  # pathologically deep parse: fall back to a flat tree
        tops = [_Item(0, 0, ("X", tuple(_leaf(t).tree for t in sent if not t.is_space)))]
    if len(tops) == 1:
        return ("ROOT", (tops[0].tree,))
    return ("ROOT", (("S", tuple(t.tree for t in tops)),))
