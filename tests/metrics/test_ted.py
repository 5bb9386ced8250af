import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paraamr.errors import TreeError
from paraamr.metrics.ted import (
    VARIANTS,
    edist_distance,
    prepare,
    ted_trees,
    tree_edit_distance,
    zss_distance,
)
from paraamr.metrics.trees import to_bracketed

A = "(ROOT (S (NP (PRP I)) (VP (VBP know))))"
B = "(ROOT (S (VP (VB go)) (. .)))"


def test_public_function_examples():
    assert tree_edit_distance(A, A) == 0
    assert tree_edit_distance(A, B) == 4
    # the authors' script keeps ROOT, S and three levels below S: all of A and B
    assert tree_edit_distance(A, B, depth=3) == 4
    assert tree_edit_distance(A, B, depth=3, variant="root-depth") == 2
    assert tree_edit_distance(A, B, kernel="zss") == 4


def test_words_are_not_counted():
    x = "(ROOT (S (NP (PRP I)) (VP (VBP know))))"
    y = "(ROOT (S (NP (PRP You)) (VP (VBP see))))"
    assert tree_edit_distance(x, y) == 0


def test_bad_tree_raises():
    with pytest.raises(TreeError):
        tree_edit_distance("(ROOT (S", B)


def test_edist_equals_zss_on_real_trees(ptb_trees):
    rng = random.Random(0)
    pairs = [(rng.choice(ptb_trees), rng.choice(ptb_trees)) for _ in range(60)]
    for a, b in pairs:
        for depth in (3, None):
            pa, pb = prepare(a, depth), prepare(b, depth)
            assert edist_distance(pa, pb) == zss_distance(pa, pb)


LABELS = st.sampled_from(["S", "NP", "VP", "PP", "NN", "DT"])


def trees(max_leaves=12):
    return st.recursive(
        st.builds(lambda lab: (lab, ()), LABELS),
        lambda kids: st.builds(
            lambda lab, cs: (lab, tuple(cs)), LABELS, st.lists(kids, min_size=1, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@settings(max_examples=150, deadline=None)
@given(trees(), trees())
def test_edist_equals_zss_on_random_trees(a, b):
    assert edist_distance(a, b) == zss_distance(a, b)


@settings(max_examples=50, deadline=None)
@given(trees(), trees(), trees())
def test_ted_is_a_metric(a, b, c):
    d = edist_distance
    assert d(a, a) == 0
    assert d(a, b) == d(b, a)
    assert d(a, c) <= d(a, b) + d(b, c)


def test_variants_differ_as_documented():
    from paraamr.metrics.trees import parse_bracketed

    t = parse_bracketed("(ROOT (S (S (NP (NN a)) (VP (VB b) (NP (DT c) (NN d))))))")
    # script: d = 0 at ROOT, nodes with d > 4 dropped (DT, NN of the object NP)
    assert to_bracketed(prepare(t, 3)) == "(ROOT (S (S (NP NN) (VP VB NP))))"
    assert to_bracketed(prepare(t, 3, VARIANTS["paraamr-script"])) == (
        "(ROOT (ROOT (S (S (NP NN) (VP VB NP)))))"
    )
    assert to_bracketed(prepare(t, 3, VARIANTS["root-depth"])) == "(ROOT (S S))"
    # AESOP: height 3 from ROOT, then every S spliced out under a fresh S
    assert to_bracketed(prepare(t, 3, VARIANTS["aesop"])) == "(S ROOT)"
    assert (
        to_bracketed(prepare(t, None, VARIANTS["aesop"])) == "(S (ROOT (NP NN) (VP VB (NP DT NN))))"
    )
    # QCPG: no ROOT (benepar), max_depth 3 from 0 at the top S
    assert to_bracketed(prepare(t, 3, VARIANTS["qcpg"])) == "(S (S (NP NN) (VP VB NP)))"
    q = ted_trees(parse_bracketed(A), parse_bracketed(B), depth=3, variant="qcpg")
    # S(NP(PRP) VP(VBP)) vs S(VP(VB) .): delete NP, PRP, relabel VBP->VB, insert . = 4 edits
    assert q == pytest.approx(4 / (5 + 4))


def test_every_preset_is_versioned_in_the_signature():
    from paraamr.metrics.signature import metric_signature

    args = dict(similarity="m", parser_sig="p", bleu="nltk-sentence", ted_kernel="edist",
                ted3_depth=3, data="d")  # fmt: skip
    sig = metric_signature(ted_variant="paraamr", **args)
    assert "|ted:paraamr-v2," in sig
    assert len({v.describe() for v in VARIANTS.values()}) == len(VARIANTS)
    with pytest.raises(ValueError, match="TED variant"):
        metric_signature(ted_variant="nope", **args)
