"""Every TED preset equals its original code (tests/metrics/ted_originals.py) on real Penn
Treebank trees.

Inputs are what each original reads: stanza-style strings with a ROOT bracket for the ParaAMR
script, CoreNLP-style strings through AESOP's own ``deleaf`` for AESOP, and benepar-style strings
(no ROOT bracket) for QCPG, while our presets always get the ROOT-bracketed tree our parsers give.
"""

from __future__ import annotations

import random

import pytest
import ted_originals as orig

from paraamr.metrics.ted import VARIANTS, prepare, ted_trees
from paraamr.metrics.trees import Tree, size, strip_words, to_bracketed
from paraamr.parsers.agreement import load_gold_trees

N_PAIRS = 300
INF = float("inf")


@pytest.fixture(scope="module")
def gold(data_dir) -> list[Tree]:
    """All cleaned gold trees of the sample (3,253), each with a single-child ROOT."""
    trees = load_gold_trees(data_dir / "ptb-sample" / "combined")
    assert all(t[0] == "ROOT" and len(t[1]) == 1 for t in trees)
    return trees


def _pairs(trees: list[Tree], n: int = N_PAIRS, seed: int = 0) -> list[tuple[Tree, Tree]]:
    rng = random.Random(seed)
    return [tuple(rng.sample(trees, 2)) for _ in range(n)]


@pytest.fixture(scope="module")
def pairs(gold):
    return _pairs(gold)


@pytest.fixture(scope="module")
def short_pairs(gold):
    """Pairs of the shorter trees (<= 20 nodes without words): full-tree zss stays fast."""
    return _pairs([t for t in gold if size(strip_words(t)) <= 20])


def _benepar(t: Tree) -> str:
    """The string benepar would give for this tree: no ROOT bracket."""
    return to_bracketed(t[1][0])


def _ours(a: Tree, b: Tree, variant: str, depth: int | None) -> float:
    return ted_trees(a, b, depth=depth, variant=variant)


def _count_equal(pairs, ours, original) -> int:
    return sum(ours(a, b) == original(a, b) for a, b in pairs)


def _count_equal_many(pairs, variants: list[str], depth: int | None, original) -> dict[str, int]:
    """How many pairs each preset scores exactly as ``original`` (computed once a pair)."""
    counts = dict.fromkeys(variants, 0)
    for a, b in pairs:
        want = original(a, b)
        for v in variants:
            counts[v] += _ours(a, b, v, depth) == want
    return counts


# --- the original's trees, node for node ---------------------------------------------------


def _from_zss(n) -> Tree:
    return (n.label, tuple(_from_zss(c) for c in n.children))


def _from_apted(n) -> Tree:
    return (n.name, tuple(_from_apted(c) for c in n.children))


def _aesop_quotes(t: Tree) -> Tree:
    """AESOP's tuple-to-string round trip in ``trim_str`` writes the label ``''`` as ``""``:
    a consistent renaming, which no distance sees; we do not copy it."""
    return ('""' if t[0] == "''" else t[0], tuple(_aesop_quotes(c) for c in t[1]))


@pytest.mark.parametrize("depth", [3, None])
def test_presets_build_the_originals_trees(gold, depth):
    """On 1,000 trees of the sample, each preset's cut tree is the tree its original builds
    (the slow run checks all of them)."""
    _check_trees(gold[:1000], depth)


@pytest.mark.slow
@pytest.mark.parametrize("depth", [3, None])
def test_presets_build_the_originals_trees_all(gold, depth):
    _check_trees(gold, depth)


def _check_trees(trees: list[Tree], depth: int | None) -> None:
    from apted.helpers import Tree as AptedTree

    max_d, height, qdepth = (4, 3, 3) if depth == 3 else (None, 5, INF)
    for t in trees:
        s = to_bracketed(t)
        script = _from_zss(orig.paraamr_script_tree(s, max_d))
        assert prepare(t, depth, VARIANTS["paraamr-script"]) == script, s
        assert prepare(t, depth, VARIANTS["paraamr"]) == script[1][0], s
        d = orig.aesop_deleaf(s)
        aesop = orig.aesop_build_tree(orig.aesop_trim_str(d, height) if height == 3 else d)
        ours = prepare(t, depth, VARIANTS["aesop"])
        assert (_aesop_quotes(ours) if depth == 3 else ours) == _from_zss(aesop), s
        qcpg = AptedTree.from_text(orig.qcpg_normalize_tree(_benepar(t), qdepth))
        assert prepare(t, depth, VARIANTS["qcpg"]) == _from_apted(qcpg), s


# --- distances on pairs ----------------------------------------------------------------------


def test_paraamr_ted3_equals_the_authors_script(pairs):
    def script(a, b):
        return orig.paraamr_script_ted(to_bracketed(a), to_bracketed(b))

    counts = _count_equal_many(pairs, ["paraamr", "paraamr-script", "root-depth"], 3, script)
    assert counts["paraamr"] == counts["paraamr-script"] == N_PAIRS
    # and the old definition does not (it keeps one level less than the script)
    assert counts["root-depth"] < N_PAIRS // 10


def test_aesop_ted3_equals_aesop(pairs):
    def aesop(a, b):
        return orig.aesop_ted(
            orig.aesop_deleaf(to_bracketed(a)), orig.aesop_deleaf(to_bracketed(b)), 3
        )

    assert _count_equal(pairs, lambda a, b: _ours(a, b, "aesop", 3), aesop) == N_PAIRS


def test_qcpg_ted3_equals_qcpg_on_benepar_strings(pairs):
    def qcpg(a, b):
        return orig.qcpg_dist(_benepar(a), _benepar(b))

    # ROOT-bracketed trees (stanza, spaCy projection, gold PTB) and benepar-style trees alike
    assert _count_equal(pairs, lambda a, b: _ours(a, b, "qcpg", 3), qcpg) == N_PAIRS
    unrooted = lambda a, b: _ours(a[1][0], b[1][0], "qcpg", 3)  # noqa: E731
    assert _count_equal(pairs, unrooted, qcpg) == N_PAIRS


def _full_tree_checks(pairs) -> dict[str, int]:
    def script(a, b):
        return orig.paraamr_script_ted(to_bracketed(a), to_bracketed(b), None)

    def aesop(a, b):
        return orig.aesop_ted(
            orig.aesop_deleaf(to_bracketed(a)), orig.aesop_deleaf(to_bracketed(b)), 5
        )

    def qcpg(a, b):
        return orig.qcpg_dist(_benepar(a), _benepar(b), INF)

    return {
        "paraamr": _count_equal(pairs, lambda a, b: _ours(a, b, "paraamr", None), script),
        "aesop": _count_equal(pairs, lambda a, b: _ours(a, b, "aesop", None), aesop),
        "qcpg": _count_equal(pairs, lambda a, b: _ours(a, b, "qcpg", None), qcpg),
    }


def test_tedf_equals_the_originals_on_short_trees(short_pairs):
    assert _full_tree_checks(short_pairs) == dict.fromkeys(("paraamr", "aesop", "qcpg"), N_PAIRS)


@pytest.mark.slow
def test_tedf_equals_the_originals_on_random_trees(pairs):
    """TED-F on 300 random pairs (~44 nodes a tree): 7 to 20 minutes of pure-Python zss here."""
    assert _full_tree_checks(pairs) == dict.fromkeys(("paraamr", "aesop", "qcpg"), N_PAIRS)
