"""Re-implementations of the original TED / Self-BLEU code, step for step, for equality tests.

Each function below does what the named original does, with the same library calls (nltk
``Tree.fromstring``, ``zss.simple_distance`` with a 0/1 label distance, ``apted``), in the same
order, including the originals' quirks (string round trips, padding by repetition). They are test
oracles: the presets in :mod:`paraamr.metrics.ted` are checked against them, never the reverse.

Originals (public repositories, read with the project's code look-up):

- ParaAMR authors' metric scripts (default input ``./merge/paranmt_out5.txt.parse``):
  the TED script (``build_tree`` with ``if d > 4: return``) and the Self-BLEU script.
- AESOP, ``PlusLabNLP/AESOP``: ``evaluation/eval_utils.py`` (``deleaf``, ``trim_tree_nltk``,
  ``trim_str``, ``build_tree``, ``compute_tree_edit_distance``) and ``evaluation/eval.py``
  (calls it with ``height = 5``: the full-tree branch).
- QCPG, ``IBM/quality-controlled-paraphrase-generation``:
  ``metrics/syntdiv_metric/syntdiv_metric.py`` (``normalize_tree``, ``tree_edit_distance``).
"""

from __future__ import annotations

import re

import numpy as np
from nltk.translate.bleu_score import sentence_bleu
from nltk.tree import Tree
from zss import Node, simple_distance


def _unit(a: str, b: str) -> int:
    return 0 if a == b else 1


# --- ParaAMR authors' TED script -------------------------------------------------------------


def paraamr_script_tree(parse: str, max_d: int | None = 4) -> Node:
    """The script's ``build_tree``: a fresh ``ROOT`` node, then the nltk tree from its top
    (``d = 0``) down, stopping when ``d > max_d``; word strings are skipped.
    ``max_d=None`` is the same walk without the cut (the script has no full-tree variant)."""
    nltk_tree = Tree.fromstring(parse)
    top = Node("ROOT")

    def walk(parent: Node, t: Tree, d: int) -> None:
        if max_d is not None and d > max_d:
            return
        node = Node(t.label())
        parent.addkid(node)
        for child in t:
            if isinstance(child, Tree):
                walk(node, child, d + 1)

    walk(top, nltk_tree, 0)
    return top


def paraamr_script_ted(pred_parse: str, ref_parse: str, max_d: int | None = 4) -> int:
    """The script's ``compute_tree_edit_distance`` (reference tree first)."""
    return simple_distance(
        paraamr_script_tree(ref_parse, max_d),
        paraamr_script_tree(pred_parse, max_d),
        label_dist=_unit,
    )


def paraamr_script_self_bleu(paraphrase_tokens: list[str], num: int = 5) -> float:
    """One source's score in the authors' Self-BLEU script, after its shuffle: the list is
    doubled until it has ``num`` entries, cut to ``num``, and every ordered pair ``i != j``
    gives ``sentence_bleu([p_i.split(" ")], p_j.split(" "))``; the mean of those.

    The script shuffles ``jobj["paraphrases"]`` first (``np.random.shuffle``); the caller passes
    the list in the order to use."""
    paraphrases = list(paraphrase_tokens)
    while len(paraphrases) < num:
        paraphrases += paraphrases
    paraphrases = paraphrases[:num]
    scores = []
    for i in range(num):
        for j in range(num):
            if i == j:
                continue
            scores.append(sentence_bleu([paraphrases[i].split(" ")], paraphrases[j].split(" ")))
    return float(np.mean(scores))


# --- AESOP ---------------------------------------------------------------------------------


def aesop_deleaf(parse_string: str) -> str:
    """AESOP's ``deleaf``: words read as empty strings, ``-NONE-``-only children removed, the
    tree printed on one line with spaced brackets."""
    tree = Tree.fromstring(parse_string.strip(), read_leaf=lambda s: "")
    for sub in tree.subtrees():
        for n, child in enumerate(sub):
            if isinstance(child, str):
                continue
            nones = list(child.subtrees(filter=lambda x: x.label() == "-NONE-"))
            if len(nones) == len(child.leaves()):
                del sub[n]
    oneline = tree.pformat(margin=10000, parens=[" ( ", " ) "])
    return re.sub(" +", " ", oneline)


def aesop_build_tree(s: str) -> Node:
    """AESOP's ``build_tree``: a fresh ``S`` node; every node labelled ``S`` or unlabelled is
    left out (its children go to its parent)."""
    old_t = Tree.fromstring(s)
    top = Node("S")

    def walk(parent: Node, t: Tree) -> None:
        if t.label() and t.label() != "S":
            node = Node(t.label())
            parent.addkid(node)
        else:
            node = parent
        for child in t:
            if isinstance(child, Tree):
                walk(node, child)

    walk(top, old_t)
    return top


def _string_comma(string: str) -> str:
    start = 0
    new_string = ""
    while start < len(string):
        if string[start:].find(",") == -1:
            new_string += string[start:]
            break
        index = string[start:].find(",")
        if string[start - 2] != "(":
            new_string += string[start : start + index]
            new_string += " "
        else:
            new_string = new_string[: start - 1] + ", "
        start = start + index + 1
    return new_string


def _clean_tuple_str(tuple_str) -> str:
    parts = []
    if len(tuple_str) == 1:
        parts.append(tuple_str[0])
    else:
        for piece in str(tuple_str).split(", "):
            if piece.count("'") == 2:
                parts.append(piece.replace("'", ""))
            elif piece.count("'") == 1:
                parts.append(piece.replace('"', ""))
    return _string_comma(" ".join(parts))


def _to_tuple(lst):
    return tuple(_to_tuple(i) if isinstance(i, list) else i for i in lst)


def _trim_tree_nltk(root, height):
    try:
        root.label()
    except AttributeError:
        return None
    if height < 1:
        return None
    state = [root.label()]
    if len(root) >= 1:
        for k in range(len(root)):
            child = root[k]
            if _trim_tree_nltk(child, height - 1):
                state.append(_trim_tree_nltk(child, height - 1))
    return state


def aesop_trim_str(string: str, height: int) -> str:
    return _clean_tuple_str(_to_tuple(_trim_tree_nltk(Tree.fromstring(string), height)))


def aesop_ted(pred_parse: str, ref_parse: str, height: int) -> int:
    """AESOP's ``compute_tree_edit_distance`` on two :func:`aesop_deleaf` strings
    (``height == 3``: TED-3; any other height, as eval.py's 5: the full tree)."""
    if height == 3:
        return simple_distance(
            aesop_build_tree(aesop_trim_str(ref_parse, height)),
            aesop_build_tree(aesop_trim_str(pred_parse, height)),
            label_dist=_unit,
        )
    return simple_distance(
        aesop_build_tree(ref_parse), aesop_build_tree(pred_parse), label_dist=_unit
    )


# --- QCPG ----------------------------------------------------------------------------------


def qcpg_normalize_tree(tree_string: str, max_depth: float = 3) -> str:
    """QCPG's ``normalize_tree``: a character scan of a benepar parse string into apted's
    ``{label{child}...}`` notation, brackets deeper than ``max_depth`` (0 = outermost) dropped,
    words (text after a space) dropped."""
    res = []
    depth = -1
    leaf = False
    for c in tree_string:
        if c in ["{", "}"]:
            continue
        if c == "(":
            leaf = False
            depth += 1
        elif c == ")":
            leaf = False
            depth -= 1
            if depth < max_depth:
                res.append("}")
                continue
        elif c == " ":
            leaf = True
            continue
        if depth <= max_depth and not leaf and c != ")":
            res.append(c if c != "(" else "{")
    return "".join(res)


def qcpg_tree_edit_distance(lintree1: str, lintree2: str) -> float:
    from apted import APTED
    from apted.helpers import Tree as AptedTree

    tree1 = AptedTree.from_text(lintree1)
    tree2 = AptedTree.from_text(lintree2)
    n1, n2 = lintree1.count("{"), lintree2.count("{")
    return APTED(tree1, tree2).compute_edit_distance() / (n1 + n2)


def qcpg_dist(pred_parse: str, ref_parse: str, max_depth: float = 3) -> float:
    """QCPG's ``dist`` on two benepar-style parse strings (``max_depth=inf``: no cut)."""
    return qcpg_tree_edit_distance(
        qcpg_normalize_tree(pred_parse, max_depth), qcpg_normalize_tree(ref_parse, max_depth)
    )
