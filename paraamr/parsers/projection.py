"""Project a spaCy dependency parse onto a Penn-Treebank-like phrase-structure tree.

Every token projects a short stack of phrase nodes ("levels", e.g. ``S > VP > VP`` for ``will
join``) and each dependent is placed, as a whole phrase, in one level of its head. Preterminals
are spaCy's fine-grained tags (``token.tag_``), leaves the words (brackets escaped as
``-LRB-``...). The trees are made for tree edit distance: on the WSJ sample of the Penn Treebank,
TED on projected trees ranks sentence pairs like TED on gold trees
(:mod:`paraamr.parsers.agreement`). They are not gold-standard constituency parses.

Attachment
    Whitespace tokens are dropped; dependents of an auxiliary (or of a whitespace token) hang
    from its head; a token whose head is outside the span is a root. With one root, the run of
    punctuation ending the sentence (commas excepted) and a sentence-initial opening quote hang
    from the root. Crossing (non-projective) arcs are lifted to the head's head, shortest first,
    so that every phrase covers contiguous words (arcs from a root excepted). One root gives
    ``ROOT(top)``, several give ``ROOT(S(top ...))``.

Clauses
    A head is clausal if tagged ``VB*``/``MD`` (unless it is ``amod``, ``compound``, ``nmod``,
    ``nummod``, ``poss``, ``det``, ``case`` or ``prep``) or if it has a subject and an auxiliary.

    - Each auxiliary before the verb (``aux``/``auxpass``, infinitival ``to`` included) opens a
      VP: ``will have gone`` is ``VP(MD VP(VB VP(VBN ...)))``. A dependent between two verb forms
      goes in the VP of the first; dependents after the main verb go in the innermost VP.
    - ``S`` holds what precedes the first verb form (subject NP, fronted PP/ADVP/SBAR/S, an
      initial ``CC``), the outer VP and the clause's outer punctuation (``S(NP VP .)``).
    - Subjects all after the first verb form give ``SINV`` (``..., said Mr. X``), or ``SQ`` in
      a root clause with a ``?``. A subject after the first verb form, and what follows it
      before the next verb form, are children of the clause node; if such material precedes the
      second verb form (``had it existed``, and in SQ always) the first verb form is a child of
      the clause too, not a VP. A root ``be`` with fronted material and no subject takes its
      post-verbal ``attr`` as subject (``SINV``).
    - ``SBAR`` wraps a non-root clause whose ``mark`` or fronted wh-phrase (and whatever precedes
      them) sits before the verb: ``SBAR(IN S)``, ``SBAR(WHNP|WHADVP|WHPP S)``; a relative clause
      (``relcl``) is always an SBAR, and so is a ``ccomp`` right of its head whose first verb form
      is finite, unless it starts or follows punctuation (quoted speech stays ``S``). A root
      question with a wh-phrase is ``SBARQ(WH.. SQ)``.
    - VP only (no S): an ``acl`` tagged ``VBG``/``VBN`` without subject (``NP(NP VP)``) and a
      conjunct without its own subject. Other clauses (``xcomp``, ``pcomp``, unmarked ``advcl``,
      ``parataxis``, ``csubj``, infinitival ``acl``...) are ``S``, ``S(VP ...)`` without subject.
    - A non-verbal ``advcl``/``ccomp`` is wrapped: ``S(ADJP ...)``, ``SBAR`` if it has a mark.
    - A colon, semicolon or dash between a fronted clause and the subject splits the clause:
      ``S(S : S(NP VP))``. A subject containing a comma takes the comma that follows it
      (``NP(NP , NP ,)``).

Phrases
    Labels come from the relation first, then the tag: a ``nsubj``, ``nsubjpass``, ``dobj``,
    ``pobj``, ``attr``, ``dative``, ``appos``, ``npadvmod``, ``poss``, ``expl`` is NP (unless
    tagged ``RB*``, ``WRB``, ``IN``, ``TO``, ``RP``, ``UH``, ``LS``); a ``CD`` ``nummod`` or
    ``quantmod`` is QP; ``advmod`` is ADVP; ``prep``/``agent`` is PP; then nouns, pronouns,
    determiners, numbers, symbols: NP; ``JJ*``/``VBN``/``VBG``: ADJP; ``RB*``/``WRB``: ADVP;
    ``IN``/``TO``: PP; ``RP``: PRT; ``UH``: INTJ; ``LS``: LST; anything else: X.

    - NP: left dependents and right ``nummod``, ``compound``, ``case``, ``nmod``, ``det``,
      ``poss``, ``quantmod`` stay in the base NP; other right dependents (``prep``, ``relcl``,
      ``acl``, ``appos``...) give ``NP(NP(base) PP SBAR ...)``.
    - ``compound`` and ``nmod`` dependents of a phrase are flattened to their words.
    - A one-word dependent is a bare POS node if it is ``punct``, ``cc``, ``preconj``, ``neg``,
      ``aux``, ``mark``, ``case``, ``det`` or ``predet``, and inside a non-clausal phrase unless its
      relation is a core one (``prep``, objects, subjects, ``attr``, ``appos``, ``relcl``, ``acl``,
      clausal complements, ``acomp``, ``oprd``, ``agent``, ``intj``, ``expl``). Every other
      dependent is a phrase: ``(ADVP (RB also))`` in a VP, but ``(ADJP (RB very) (JJ big))``.

Coordination
    Chains ``A conj B conj C`` are flattened (conjuncts are siblings); ``cc`` after the first
    conjunct and ``preconj`` sit at the coordination level, a ``cc`` before its head (``But``
    opening a sentence) is an ordinary dependent.

    - If no non-first conjunct has dependents (punctuation and conjunction words aside), the
      conjuncts are flat in the first one's innermost phrase: ``NP(DT NNS CC NNS)``,
      ``VP(VBD CC VBD NP)``.
    - Verbs: if every later conjunct has its own subject, ``S(S , CC S .)``, the material before
      the first subject (``PP ,``) being shared at the top; otherwise ``VP(VP CC VP)`` over the
      innermost VP (the outermost if a conjunct has its own auxiliary).
    - Other heads: ``X(X CC X)`` over the first conjunct's whole phrase.
    - A conjunct's dependents that come after the next conjunct are shared: they are placed at
      the coordination level (``NP(NP CC NP PP)`` for ``president and chief of X``).

Punctuation and order
    A punctuation dependent goes in the deepest level of its head whose other material
    surrounds it, else in the head's top level. Punctuation at the edges of a dependent clause
    (S, SBAR, SINV, SQ, SBARQ, VP) moves up to the parent: ``S(`` S , '' NP VP .)``. A
    ``parataxis`` clause between two commas or dashes is ``PRN(, S ,)``; a phrase between
    ``-LRB-`` and ``-RRB-`` is ``PRN(-LRB- X -RRB-)``. Siblings are ordered by their first word, so
    a non-projective parse can give a crossing order. A parse too deep for Python's recursion
    limit falls back to ``ROOT(X(tags))``; in a span without a parse every token is a root.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import takewhile
from typing import TYPE_CHECKING

from paraamr.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from spacy.tokens import Span, Token

__all__ = ["Tree", "project_sentence", "RULES_VERSION"]

#: Bumped whenever a rule changes the trees; part of every signature that uses this parser.
RULES_VERSION = "2"

Tree = tuple  # (label: str, children: tuple[Tree, ...]); a word leaf is (word, ())
Kids = dict  # token index -> the token's dependents in the projection

_VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"})
_FINITE_TAGS = frozenset({"VBD", "VBP", "VBZ", "MD"})
_NOUN_TAGS = frozenset(
    {"NN", "NNS", "NNP", "NNPS", "PRP", "PRP$", "EX", "WP", "WP$", "WDT", "DT", "PDT", "CD"}
    | {"$", "#", "FW", "ADD", "XX", "GW", "NFP", "SYM"}
)
_ADJ_TAGS = frozenset({"JJ", "JJR", "JJS", "AFX", "VBN", "VBG"})
_LABEL_BY_TAG = {
    **dict.fromkeys(_ADJ_TAGS, "ADJP"),
    **dict.fromkeys(("RB", "RBR", "RBS", "WRB"), "ADVP"),
    **dict.fromkeys(("IN", "TO"), "PP"),
    **{"RP": "PRT", "UH": "INTJ", "LS": "LST"},
}
_NON_ADJ_PHRASE_TAGS = _LABEL_BY_TAG.keys() - _ADJ_TAGS
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_PUNCT_TAGS = frozenset({".", ",", ":", "``", "''", "-LRB-", "-RRB-", "HYPH"})
_BE = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m"})
_SUBJ = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_AUX = frozenset({"aux", "auxpass"})
_CLAUSAL_DEPS = frozenset({"csubj", "csubjpass", "advcl", "ccomp", "xcomp", "parataxis", "conj"})
_NOMINAL_DEPS = frozenset(
    {"nsubj", "nsubjpass", "dobj", "pobj", "attr", "dative", "appos", "npadvmod", "poss", "expl"}
)
_NON_CLAUSAL = frozenset({"amod", "compound", "nmod", "nummod", "poss", "det", "case", "prep"})
_LEAF_DEPS = frozenset({"punct", "cc", "preconj", "neg", "aux", "auxpass", "mark", "case", "det"})
_LEAF_DEPS |= {"predet"}
_PHRASAL = _NOMINAL_DEPS - {"npadvmod", "poss"} | _CLAUSAL_DEPS
_PHRASAL |= {"prep", "relcl", "acl", "pcomp", "oprd", "agent", "acomp", "intj", "conj"}
_NP_BASE_RIGHT = frozenset({"nummod", "compound", "case", "nmod", "det", "poss", "quantmod"})
_FLATTEN = frozenset({"compound", "nmod"})
_CLAUSES = frozenset({"S", "SBAR", "SINV", "SQ", "SBARQ", "VP"})
_PTB_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}


@dataclass
class _Item:
    """A child being placed: its token span (for ordering and punctuation) and its tree."""

    lo: int
    hi: int
    tree: Tree
    parts: tuple[_Item, ...] = ()  # the child items a phrase was built from
    role: str = ""  # the dependency relation the item realises


@dataclass
class _Level:
    """One phrase node of a head's projection; the next inner level is its implicit child."""

    label: str
    items: list[_Item] = field(default_factory=list)


# --- small helpers -----------------------------------------------------------------------------


def _leaf(tok: Token) -> _Item:
    word = _PTB_ESCAPES.get(tok.text) or tok.text.replace(" ", "_")
    word = word.replace("(", "-LRB-").replace(")", "-RRB-") if len(word) > 1 else word
    return _Item(tok.i, tok.i, (tok.tag_ or tok.pos_ or "XX", ((word, ()),)))


def _span(items: Iterable[_Item]) -> tuple[int, int]:
    items = list(items)
    return min(i.lo for i in items), max(i.hi for i in items)


def _join(label: str, parts: list[_Item]) -> _Item:
    """A phrase over ``parts`` (already ordered), parenthetical clauses bracketed as PRN."""
    parts = _parentheticals(parts)
    lo, hi = _span(parts)
    return _Item(lo, hi, (label, tuple(p.tree for p in parts)), tuple(parts))


def _is_punct(tok: Token, kids: Kids) -> bool:
    return (tok.dep_ == "punct" or tok.tag_ in _PUNCT_TAGS) and not kids[tok.i]


def _punctish(tok: Token) -> bool:
    return tok.is_punct or tok.tag_ in _PUNCT_TAGS


def _is_punct_leaf(tree: Tree) -> bool:
    return tree[0] in _PUNCT_TAGS and len(tree[1]) == 1 and not tree[1][0][1]


def _has_subject(tok: Token, kids: Kids) -> bool:
    return any(d.dep_ in _SUBJ for d in kids[tok.i])


def _is_extra(dep: Token, head: Token) -> bool:
    """A conjunction word of the coordination level: ``preconj``, ``cc`` after its head."""
    return dep.dep_ == "preconj" or (dep.dep_ == "cc" and dep.i > head.i)


def _own_deps(tok: Token, kids: Kids, coord: bool) -> tuple[list[Token], list[Token]]:
    """Non-punctuation and punctuation dependents, without conjuncts (and conjunction words
    when ``tok`` is coordinated)."""
    deps = [d for d in kids[tok.i] if d.dep_ != "conj" and not (coord and _is_extra(d, tok))]
    punct = [d for d in deps if _is_punct(d, kids)]
    return [d for d in deps if d not in punct], punct


def _subtree_leaves(tok: Token, kids: Kids) -> list[_Item]:
    return [_leaf(tok)] + [it for d in kids[tok.i] for it in _subtree_leaves(d, kids)]


def _phrase_label(tok: Token) -> str:
    if tok.dep_ in _NOMINAL_DEPS and tok.tag_ not in _NON_ADJ_PHRASE_TAGS:
        return "NP"
    if tok.tag_ == "CD" and tok.dep_ in ("nummod", "quantmod"):
        return "QP"
    if tok.dep_ == "advmod" and tok.tag_ not in _NOUN_TAGS:
        return "ADVP"
    if tok.dep_ in ("prep", "agent"):
        return "PP"
    return "NP" if tok.tag_ in _NOUN_TAGS else _LABEL_BY_TAG.get(tok.tag_, "X")


def _is_clausal(tok: Token, kids: Kids) -> bool:
    if tok.dep_ in _NON_CLAUSAL or tok.dep_ in _AUX:
        return False
    deps = {d.dep_ for d in kids[tok.i]}
    return tok.tag_ in _VERB_TAGS or bool(deps & _SUBJ and deps & _AUX)


def _is_wh(dep: Token, kids: Kids) -> str | None:
    """The WH label if ``dep`` is a (fronted) wh-phrase, else ``None``."""
    if dep.dep_ in _CLAUSAL_DEPS:
        return None
    if dep.tag_ in _WH_TAGS or dep.left_edge.tag_ in _WH_TAGS:
        return "WHADVP" if dep.tag_ == "WRB" else "WHNP"
    if dep.dep_ == "prep" and any(k.left_edge.tag_ in _WH_TAGS for k in kids[dep.i]):
        return "WHPP"
    return None


# --- placing dependents and punctuation ---------------------------------------------------------


def _items(dep: Token, kids: Kids, clause: bool) -> list[_Item]:
    """How ``dep`` appears among its head's children (``clause``: the head is clausal)."""
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


def _parentheticals(parts: list[_Item]) -> list[_Item]:
    """``, S ,`` around a parenthetical clause (spaCy ``parataxis``) becomes ``PRN(, S ,)``."""
    for k in range(1, len(parts) - 1):
        a, mid, b = parts[k - 1 : k + 2]
        if mid.role == "parataxis" and a.tree[0] in (",", ":") and b.tree[0] == a.tree[0]:
            prn = _Item(a.lo, b.hi, ("PRN", (a.tree, mid.tree, b.tree)), (a, mid, b))
            return parts[: k - 1] + [prn] + _parentheticals(parts[k + 2 :])
    return parts


def _place_punct(levels: list[_Level], puncts: list[Token]) -> None:
    """Put each mark in the deepest level whose other material surrounds it, else the top."""
    spans: list[tuple[int, int] | None] = []
    for depth in range(len(levels)):
        inner = [it for lv in levels[depth:] for it in lv.items]
        spans.append(_span(inner) if inner else None)
    for p in puncts:
        target = levels[0]
        for level, sp in zip(levels, spans, strict=True):
            if sp is not None and sp[0] < p.i < sp[1]:
                target = level
        target.items.append(_leaf(p))


def _render(levels: list[_Level]) -> _Item:
    """Nest the levels (outermost first), ordering each node's children by position."""
    inner: _Item | None = None
    for level in reversed(levels):
        items = level.items + ([inner] if inner else [])
        if items:  # (a level is never empty; cheap insurance against crashing)
            inner = _join(level.label, sorted(items, key=lambda i: (i.lo, i.hi)))
    assert inner is not None
    return inner


# --- clauses ------------------------------------------------------------------------------------


def _sbar_front(deps: list[Token], first: int, kids: Kids) -> list[_Item]:
    """The complementizer / wh-phrase (and anything before them) of a subordinate clause."""
    front = [d for d in deps if d.i < first]
    cut = max((d.i for d in front if d.dep_ == "mark" or _is_wh(d, kids)), default=-1)
    out: list[_Item] = []
    for d in (d for d in front if d.i <= cut):
        wh = _is_wh(d, kids) if d.dep_ != "mark" else None
        for it in _items(d, kids, clause=True):
            out.append(_join(wh, list(it.parts) or [it]) if wh else it)
    return out


def _subjects(v: Token, deps: list[Token], first: int) -> list[Token]:
    """Subjects of ``v``; in ``On the list were X`` the post-verbal ``attr`` counts as one."""
    subj = [d for d in deps if d.dep_ in _SUBJ]
    if subj or v.dep_ != "ROOT" or v.lower_ not in _BE or not any(d.i < first for d in deps):
        return subj
    return [d for d in deps if d.dep_ == "attr" and d.i > v.i][:1]


def _wants_sbar(v: Token, spine: list[Token]) -> bool:
    if v.dep_ == "relcl":
        return True
    if v.dep_ != "ccomp" or v.i < v.head.i or spine[0].tag_ not in _FINITE_TAGS:
        return False
    edge = v.left_edge
    before = v.doc[edge.i - 1] if edge.i > 0 else edge
    return not (_punctish(edge) or _punctish(before))  # quoted speech is a bare S


def _clause_levels(
    v: Token, kids: Kids, vp_only: bool, coord: bool
) -> tuple[list[_Level], list[Token]]:
    """Levels ``SBAR? > S|SINV|SQ > VP > ... > VP`` of a verbal head, and its punctuation."""
    deps, puncts = _own_deps(v, kids, coord)
    spine = sorted((d for d in deps if d.dep_ in _AUX and d.i < v.i), key=lambda t: t.i) + [v]
    deps = [d for d in deps if d not in spine]
    first = spine[0].i
    subj = _subjects(v, deps, first)
    subj_i = min((s.i for s in subj), default=first)
    inverted = bool(subj) and subj_i > first
    late_subj = min((s.i for s in subj if s.i > first), default=len(v.doc))
    question = v.dep_ == "ROOT" and any(p.text == "?" for p in puncts)
    front: list[_Item] = []
    if (v.dep_ != "ROOT" or question) and not vp_only:
        front = _sbar_front(deps, first, kids)
        cut = max((it.hi for it in front), default=-1)
        deps = [d for d in deps if d.i > cut]

    vps = [_Level("VP", [_leaf(s)]) for s in spine]
    top = _Level("SQ" if question and (inverted or front) else "SINV" if inverted else "S")
    for d in deps:
        items = _items(d, kids, clause=True)
        k = max(j for j, s in enumerate(spine) if s.i < d.i or j == 0)
        if d.i < first or (k == 0 and (d in subj or d.i > late_subj)):
            top.items.extend(items)
            if d in subj and not inverted:
                puncts = _absorb_comma(d, items[0], top, puncts)
        else:
            vps[k].items.extend(items)
    between = len(spine) > 1 and any(spine[0].i < it.lo < spine[1].i for it in top.items)
    if between or (inverted and top.label == "SQ"):
        top.items.extend(vps.pop(0).items)  # a fronted auxiliary is a child of SQ/SINV
    if vp_only:  # no S level: what would go there stays in the outer VP
        vps[0].items.extend(top.items)
    levels = ([] if vp_only else _split_colon(top, puncts, min(subj_i, first))) + vps
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


# --- phrases and coordination -------------------------------------------------------------------


def _phrase_levels(tok: Token, kids: Kids, coord: bool) -> tuple[list[_Level], list[Token]]:
    """Levels of a non-verbal head (an NP with post-modifiers gets an outer NP)."""
    deps, puncts = _own_deps(tok, kids, coord)
    label = _phrase_label(tok)
    base, outer = _Level(label, [_leaf(tok)]), _Level(label)
    for d in deps:  # in word order: once a post-modifier is met, all go to the outer NP
        post = label == "NP" and d.i > tok.i and (d.dep_ not in _NP_BASE_RIGHT or outer.items)
        (outer if post else base).items.extend(_items(d, kids, clause=False))
    return ([outer, base] if outer.items else [base]), puncts


def _levels(tok: Token, kids: Kids, coord: bool, member: bool) -> tuple[list[_Level], list[Token]]:
    if not _is_clausal(tok, kids):
        return _phrase_levels(tok, kids, coord)
    vp_only = member or (tok.dep_ == "acl" and tok.tag_ in ("VBG", "VBN"))
    return _clause_levels(tok, kids, vp_only and not _has_subject(tok, kids), coord)


def _conj_chain(tok: Token, kids: Kids) -> list[Token]:
    return [x for d in kids[tok.i] if d.dep_ == "conj" for x in [d, *_conj_chain(d, kids)]]


def _coordinate(tok: Token, kids: Kids, levels: list[_Level], chain: list[Token]) -> list[Token]:
    """Add the conjuncts ``chain`` of ``tok`` to its levels; return punctuation to place."""
    lifted: list[Token] = []
    extras = [d for m in [tok, *chain] for d in kids[m.i] if _is_extra(d, m)]
    coord_items = [it for d in extras for it in _subtree_leaves(d, kids)]
    last = max(m.i for m in chain)
    interleaved = any(tok.i < it.lo < last for lv in levels[:-1] for it in lv.items)
    if not interleaved and all(not _own_deps(m, kids, True)[0] for m in chain):  # flat
        lifted += [p for m in chain for p in _own_deps(m, kids, True)[1]]
        levels[-1].items.extend(coord_items + [_leaf(m) for m in chain])
        return lifted
    chain = sorted(chain, key=lambda m: m.i)
    for m, nxt in zip(chain, [*chain[1:], None], strict=True):
        coord_items += _member(m, kids, lifted, max(nxt.i, m.i) if nxt else len(m.doc))
    labels = [lv.label for lv in levels]
    at = 0
    if "VP" in labels and not all(_has_subject(m, kids) for m in chain):
        has_aux = any(d.dep_ in _AUX for m in chain for d in kids[m.i])
        at = labels.index("VP") if has_aux else len(labels) - 1
    elif "S" in labels or "SINV" in labels:
        at = labels.index("S" if "S" in labels else "SINV")
        coord_items += _shared_front(levels[at])
    coord_items += _shared_back(levels, at, max(chain[0].i, tok.i))
    levels.insert(at, _Level(levels[at].label, coord_items))
    return lifted


def _shared_front(s_level: _Level) -> list[_Item]:
    """Take out the items before the subject (they scope over all coordinated clauses)."""
    subj = [it.lo for it in s_level.items if it.role in _SUBJ]
    front = [it for it in s_level.items if subj and it.hi < min(subj)]
    s_level.items = [it for it in s_level.items if it not in front]
    return front


def _shared_back(levels: list[_Level], at: int, end: int) -> list[_Item]:
    """Take out the items of ``levels[at:]`` after word ``end`` (dependents of a conjunct that
    follow the next conjunct: they are shared by the coordination)."""
    back = [it for lv in levels[at:] for it in lv.items if it.lo > end]
    for k in range(len(levels) - 1, at - 1, -1):
        levels[k].items = [it for it in levels[k].items if it.lo <= end]
        if not levels[k].items and k + 1 < len(levels) and levels[k + 1].label == levels[k].label:
            del levels[k]  # an NP over post-modifiers that all moved out
    return back


def _member(m: Token, kids: Kids, lifted: list[Token], end: int) -> list[_Item]:
    """A non-first conjunct, then its dependents after ``end`` (the next conjunct), which are
    shared; its punctuation outside its own material goes to ``lifted``."""
    levels, puncts = _levels(m, kids, coord=True, member=True)
    shared = _shared_back(levels, 0, end)
    lo, hi = _span(it for lv in levels for it in lv.items)
    lifted.extend(p for p in puncts if not lo < p.i < hi)
    _place_punct(levels, [p for p in puncts if lo < p.i < hi])
    return [_render(levels), *shared]


def _constituent(tok: Token, kids: Kids) -> _Item:
    """The full projection of ``tok`` with all its dependents."""
    chain = _conj_chain(tok, kids)
    levels, puncts = _levels(tok, kids, coord=bool(chain), member=False)
    if chain:
        puncts = puncts + _coordinate(tok, kids, levels, chain)
    _place_punct(levels, puncts)
    return _render(levels)


# --- entry point --------------------------------------------------------------------------------


def _attachment(tok: Token, start: int, end: int) -> Token | None:
    """The head ``tok`` hangs from (auxiliaries and whitespace skipped); ``None`` for a root."""
    head = tok.head
    for _ in range(end - start):
        if head.i == tok.i or not start <= head.i < end:
            return None
        if not (head.is_space or head.dep_ in _AUX) or head.head.i == head.i:
            return None if head.is_space else head
        head = head.head
    return None


def _projectivize(words: list[Token], heads: dict[int, Token | None]) -> None:
    """Lift crossing arcs, shortest first, to the head's head until no phrase is discontinuous
    (arcs from a root are left alone)."""
    for _ in range(len(words) ** 2):
        arcs = _crossing_arcs(words, heads)
        if not arcs:
            return
        t = min(arcs, key=lambda t: abs(t.i - heads[t.i].i))
        heads[t.i] = heads[heads[t.i].i]


def _crossing_arcs(words: list[Token], heads: dict[int, Token | None]) -> list[Token]:
    """Dependents whose arc spans a word their head does not dominate (head not a root)."""
    pos = {t.i: k for k, t in enumerate(words)}
    below: dict[int, set[int]] = {t.i: set() for t in words}  # positions each token dominates
    for t in words:
        h, steps = heads[t.i], 0
        while h is not None and steps < len(words):
            below[h.i].add(pos[t.i])
            h, steps = heads[h.i], steps + 1
    out = []
    for t in words:
        h = heads[t.i]
        if h is not None and heads[h.i] is not None:
            lo, hi = sorted((pos[t.i], pos[h.i]))
            if any(k not in below[h.i] for k in range(lo + 1, hi)):
                out.append(t)
    return out


def _dependents(sent: Span) -> tuple[Kids, list[Token]]:
    """Dependents of each token in the projection, and the roots (see the module rules)."""
    words = [t for t in sent if not t.is_space]
    heads = {t.i: _attachment(t, sent.start, sent.end) for t in words}
    roots = [t for t in words if heads[t.i] is None]
    if len(roots) == 1:  # closing punctuation and an opening quote hang from the root
        closing = takewhile(_punctish, reversed(words))
        edges = [w for w in closing if w.tag_ in _PUNCT_TAGS - {","}]
        edges += [w for w in takewhile(_punctish, words) if w.tag_ == "``"]
        for w in edges:
            if w != roots[0] and all(heads[t.i] != w for t in words):
                heads[w.i] = roots[0]
    _projectivize(words, heads)
    kids: Kids = {t.i: [] for t in sent}
    for t in words:
        if heads[t.i] is not None:
            kids[heads[t.i].i].append(t)
    return kids, roots


def project_sentence(sent: Span) -> Tree:
    """Project the dependency parse of one sentence onto a PTB-like constituency tree.

    Args:
        sent: a spaCy ``Span`` (an item of ``doc.sents``, or ``doc[:]``) from a pipeline with a
            tagger and a dependency parser. Several sentences in one span are accepted (their
            trees go under one ``S``).

    Returns:
        A tuple tree ``("ROOT", (top,))`` whose preterminals are spaCy's fine-grained tags and
        whose leaves are the words, following the rules of the module docstring.

    Raises:
        ValueError: if the span holds no token but whitespace (the caller decides what an empty
            sentence means).
    """
    kids, roots = _dependents(sent)
    if not roots:
        raise InputError("cannot project an empty sentence")
    try:
        tops = sorted((_constituent(r, kids) for r in roots), key=lambda i: i.lo)
    except RecursionError:  # pathologically deep parse: flat fallback
        tops = [_Item(0, 0, ("X", tuple(_leaf(t).tree for t in sent if not t.is_space)))]
    if len(tops) == 1:
        return ("ROOT", (tops[0].tree,))
    return ("ROOT", (("S", tuple(t.tree for t in tops)),))
