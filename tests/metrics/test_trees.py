import pytest

from paraamr.errors import TreeError
from paraamr.metrics.trees import (
    clean_ptb,
    leaves,
    parse_bracketed,
    parse_many,
    prune,
    size,
    strip_words,
    to_bracketed,
)

T = "(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"


def test_roundtrip_and_leaves():
    t = parse_bracketed(T)
    assert to_bracketed(t) == T
    assert leaves(t) == ["The", "cat", "sat", "."]


@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        (1, "ROOT"),
        (2, "(ROOT S)"),
        (3, "(ROOT (S NP VP .))"),
        (4, "(ROOT (S (NP DT NN) (VP VBD) (. .)))"),
        (None, "(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"),
    ],
)
def test_prune_depth_outermost_is_1(depth, expected):
    assert to_bracketed(prune(parse_bracketed(T), depth)) == expected


def test_strip_words_keeps_pos_nodes():
    assert size(strip_words(parse_bracketed(T))) == 8


@pytest.mark.parametrize("bad", ["", "   ", "(S (NP", "(S x) (S y)", "S", "()"])
def test_bad_trees_raise(bad):
    with pytest.raises(TreeError):
        parse_bracketed(bad)


def test_clean_ptb_real_file(data_dir):
    text = (data_dir / "ptb-sample" / "combined" / "wsj_0001.mrg").read_text()
    trees = parse_many(text)
    assert len(trees) == 2 and all(t[0] == "ROOT" for t in trees)
    c = clean_ptb(trees[0])
    s = to_bracketed(c)
    assert "-SBJ" not in s and "-NONE-" not in s
    assert leaves(c)[:3] == ["Pierre", "Vinken", ","]


def test_clean_ptb_drops_traces():
    t = parse_bracketed("(S (NP-SBJ-1 (-NONE- *T*-1)) (VP (VBD went) (NP-TMP (NN today))))")
    assert to_bracketed(clean_ptb(t)) == "(S (VP (VBD went) (NP (NN today))))"


@pytest.mark.parametrize("word", ["(", ")", "a b", "", "{", "x(y)"])
def test_any_token_roundtrips_through_brackets(word):
    t = ("ROOT", (("NP", (("NN", ((word, ()),)),)),))
    again = parse_bracketed(to_bracketed(t))
    assert again[0] == "ROOT" and len(leaves(again)) == 1
