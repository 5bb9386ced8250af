"""The generator's target encoding: the paper's example, round trips on every real tree,
typed errors for invalid generator outputs."""

from __future__ import annotations

import re

import pytest

from paraamr.top.encoding import (
    DECODE_ERROR_KINDS,
    DecodeError,
    LabelVocab,
    decode,
    encode,
    try_decode,
)
from paraamr.top.readers import read_trees
from paraamr.top.templates import template
from paraamr.top.trees import parse_tree, to_string

# Tran & Tan, Figure 4 (TABREF1 in the S2ORC text), copied verbatim
PAPER_SOURCE = (
    "[in:get_distance [mask] [sl:destination [in:get_location [sl:category_location [mask] "
    "sl:category_location] in:get_location] sl:destination] in:get_distance]"
)
PAPER_TARGET = (
    "[in:get_distance How far is [sl:destination [in:get_location [sl:category_location the "
    "coffee shop sl:category_location] in:get_location] sl:destination] in:get_distance]"
)
PAPER_TREE = (
    "[IN:GET_DISTANCE How far is [SL:DESTINATION [IN:GET_LOCATION [SL:CATEGORY_LOCATION the "
    "coffee shop ] ] ] ]"
)


def test_paper_figure_4_pair():
    t = parse_tree(PAPER_TREE)
    assert encode(template(t)) == PAPER_SOURCE
    assert encode(t) == PAPER_TARGET
    assert to_string(decode(PAPER_TARGET)) == PAPER_TREE
    assert to_string(decode(PAPER_SOURCE, masks=True)) == to_string(template(t))


def _regex_encode(tree: str) -> str:
    """Independent encoding over the canonical string: a stack of labels for the ']'s."""
    out, stack = [], []
    for tok in tree.split(" "):
        if tok.startswith("["):
            stack.append(tok[1:].lower())
            out.append("[" + stack[-1])
        elif tok == "]":
            out.append(stack.pop() + "]")
        else:
            out.append(tok)
    return " ".join(out)


# the clean eval/test trees are a subset of top-v1's eval/test trees
REAL = ["top-v1/eval.tsv", "top-v1/test.tsv", "top-v1-train-clean/train.clean.seq"]


@pytest.mark.parametrize("rel", REAL)
def test_every_real_tree_decodes_back(data_dir, rel):
    trees = read_trees(data_dir / rel)
    vocab = LabelVocab.from_trees(trees)
    for t in trees:
        s = to_string(t)
        e = encode(t)
        assert e == _regex_encode(s)
        assert not re.search(r"\[(IN|SL):", e)  # labels lowercased
        assert decode(e, vocab) == t
        assert decode(e) == t  # TOP labels are upper case: no vocab needed
        assert decode(encode(template(t)), vocab, masks=True) == template(t)


def test_vocab_restores_mixed_case_labels_and_rejects_unknown_ones():
    t = parse_tree("[IN:GetWeather in [SL:City Paris ] ]")
    vocab = LabelVocab.from_trees([t])
    assert decode(encode(t), vocab) == t
    assert to_string(decode(encode(t))) == "[IN:GETWEATHER in [SL:CITY Paris ] ]"
    with pytest.raises(DecodeError) as ei:
        decode("[in:getweather x [sl:country y sl:country] in:getweather]", vocab)
    assert (ei.value.kind, ei.value.position) == ("unknown_label", 17)
    assert LabelVocab.from_json(vocab.to_json()).by_encoded == vocab.by_encoded
    with pytest.raises(ValueError, match="differ only in case"):
        LabelVocab.from_labels(["SL:City", "SL:CITY"])
    with pytest.raises(ValueError, match="IN:NAME or SL:NAME"):
        LabelVocab.from_labels(["CITY"])


BAD = [
    ("", "empty", None),
    ("[in:a x", "unbalanced", 0),
    ("[in:a x in:a] in:a]", "unbalanced", 14),
    ("[in:a x [sl:b y in:a] sl:b]", "mismatched_close", 16),
    ("[in:a x [sl:b y ] in:a]", "bracket_in_word", 16),  # a bare TOP ']' is not the encoding
    ("[foo:a x foo:a]", "bad_label", 0),
    ("[in:a x [sl:b sl:b] in:a]", "empty_span", 8),
    ("[in:a x] in:a]", "bracket_in_word", 6),
    ("hi [in:a x in:a]", "outside_root", 0),
    ("[in:a x in:a] [in:b y in:b]", "outside_root", 14),
    ("[in:a [mask] in:a]", "mask", 6),
]


@pytest.mark.parametrize(("text", "kind", "pos"), BAD, ids=[b[0] or "blank" for b in BAD])
def test_invalid_outputs_give_typed_errors(text, kind, pos):
    with pytest.raises(DecodeError) as ei:
        decode(text)
    assert (ei.value.kind, ei.value.position) == (kind, pos)
    assert try_decode(text) == (None, kind)


def test_error_kinds_covered():
    covered = {k for _, k, _ in BAD} | {"unknown_label"}
    assert covered == set(DECODE_ERROR_KINDS)


def test_decoding_tolerates_whitespace_and_label_case():
    assert to_string(decode("  [IN:a   x\n[Sl:b y SL:B] in:A]  ")) == "[IN:A x [SL:B y ] ]"
    assert decode("[in:a x [sl:b sl:b] in:a]", allow_empty=True).children[1].children == ()
