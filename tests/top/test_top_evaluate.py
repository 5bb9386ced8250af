"""Exact match, the auxiliary-parser filter, low-resource subsamples, training pairs and the
sampling plan, on hand-built cases (and the real train set for the subsamples)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from paraamr.top.encoding import decode
from paraamr.top.evaluate import (
    ap_filter,
    ap_filter_with,
    exact_match,
    exact_match_report,
    low_resource_subsamples,
    one_per_template,
)
from paraamr.top.pairs import (
    collect_samples,
    generator_pairs,
    parser_pairs,
    sampling_plan,
    unique_templates,
)
from paraamr.top.readers import read_trees
from paraamr.top.templates import template_counts
from paraamr.top.trees import parse_tree, to_string


def P(s: str):
    return parse_tree(s)


def test_filter_keeps_exactly_the_samples_whose_parse_matches():
    syn = [
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 0 parse identical
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 1 same tree, spacing differs
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 2 slot label differs
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 3 span boundary differs
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 4 invalid parse
        P("[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]"),  # 5 no parse
        P("[IN:GET_INFO_TRAFFIC traffic [SL:LOCATION here ] ]"),  # 6 word case differs
        P("[IN:GET_INFO_TRAFFIC traffic [SL:LOCATION here ] ]"),  # 7 parse given as a tree
    ]
    parses = [
        "[IN:GET_EVENT events [SL:DATE_TIME tonight ] ]",
        " [IN:GET_EVENT  events [SL:DATE_TIME tonight ]  ] ",
        "[IN:GET_EVENT events [SL:LOCATION tonight ] ]",
        "[IN:GET_EVENT [SL:DATE_TIME events tonight ] ]",
        "[IN:GET_EVENT events [SL:DATE_TIME tonight ]",
        None,
        "[IN:GET_INFO_TRAFFIC Traffic [SL:LOCATION here ] ]",
        P("[IN:GET_INFO_TRAFFIC traffic [SL:LOCATION here ] ]"),
    ]
    r = ap_filter(syn, parses)
    assert r.kept_index == [0, 1, 7]
    assert r.kept == [syn[0], syn[1], syn[7]]
    assert r.summary() == {"total": 8, "kept": 3, "dropped": 3, "invalid": 2}
    with pytest.raises(ValueError):
        ap_filter(syn, parses[:-1])


def test_filter_with_a_parser_callable_batches_the_utterances():
    words = ["w0", "a long w1", "w2", "w3 w3", "w4"]
    syn = [P(f"[IN:A {w} ]") for w in words]
    seen: list[list[str]] = []

    def parser(batch):
        seen.append(batch)
        return [f"[IN:A {u} ]" if u != "w3 w3" else "[IN:B w3 w3 ]" for u in batch]

    r = ap_filter_with(syn, parser, batch_size=2)
    # length-sorted batches (characters), answers back in input order
    assert seen == [["w0", "w2"], ["w4", "w3 w3"], ["a long w1"]]
    assert r.kept_index == [0, 1, 2, 4] and r.dropped == 1
    with pytest.raises(ValueError, match="1 results for a batch of 5"):
        ap_filter_with(syn, lambda b: b[:1])


def test_exact_match_overall_and_by_bucket():
    train = template_counts(P(s) for s in ["[IN:A x ]"] * 5 + ["[IN:B x [SL:C y ] ]"])
    gold = ["[IN:A a ]", "[IN:A b ]", "[IN:B a [SL:C b ] ]", "[IN:B [SL:C b ] ]", "[IN:D q ]"]
    pred = ["[IN:A a ]", "[IN:A c ]", "[IN:B a [SL:C b ] ]", "[IN:B [SL:C b ]", None]
    r = exact_match_report(pred, gold, train)
    got = {k: (v.n, v.correct, v.invalid) for k, v in r.items()}
    assert got == {
        "overall": (5, 2, 2),
        "f>=5": (2, 1, 0),
        "f<5": (1, 1, 0),
        "f=0": (2, 0, 2),
    }
    assert r["overall"].exact_match == pytest.approx(40.0)
    assert r["f<5"].exact_match == 100.0
    assert list(exact_match_report(pred, gold)) == ["overall"]
    assert exact_match_report([], [], train)["f=0"].exact_match is None
    with pytest.raises(ValueError, match="gold"):
        exact_match("[IN:A x ]", "[IN:A x")


def _regex_template(s: str) -> str:
    return re.sub(r"(?:(?<= )[^\s\[\]]+ )+", "[mask] ", s)


def test_low_resource_one_utterance_per_template_on_the_real_train_set(data_dir):
    trees = read_trees(data_dir / "top-v1-train-clean" / "train.clean.seq")
    strings = [to_string(t) for t in trees]
    n_templates = len({_regex_template(s) for s in strings})
    subs = low_resource_subsamples(trees, n_subsamples=5, seed=0)
    assert len(subs) == 5
    for idx in subs:
        assert idx == sorted(set(idx)) and len(idx) == n_templates
        assert len({_regex_template(strings[i]) for i in idx}) == n_templates
    assert len({tuple(s) for s in subs}) == 5  # the 5 draws differ
    assert one_per_template(trees, seed=3) == subs[3]  # seeds seed, seed+1, ...
    assert low_resource_subsamples(trees, 2, seed=7) == low_resource_subsamples(trees, 2, seed=7)


def test_low_resource_draw_is_uniform_within_a_template():
    trees = [P(f"[IN:A w{i} ]") for i in range(4)] + [P("[IN:B z ]")]
    picks = Counter()
    for seed in range(2000):
        (a, b) = one_per_template(trees, seed)
        assert b == 4
        picks[a] += 1
    assert set(picks) == {0, 1, 2, 3}
    assert all(400 < c < 600 for c in picks.values())  # ~500 each


def test_training_pairs():
    trees = [P("[IN:A how far [SL:B the shop ] ]"), P("[IN:C hi ]")]
    assert generator_pairs(trees) == [
        ("[in:a [mask] [sl:b [mask] sl:b] in:a]", "[in:a how far [sl:b the shop sl:b] in:a]"),
        ("[in:c [mask] in:c]", "[in:c hi in:c]"),
    ]
    assert parser_pairs(trees) == [
        ("how far the shop", "[IN:A how far [SL:B the shop ] ]"),
        ("hi", "[IN:C hi ]"),
    ]
    assert parser_pairs(trees, encoded=True)[1] == ("hi", "[in:c hi in:c]")
    for _, tgt in parser_pairs(trees, encoded=True):
        assert to_string(decode(tgt)) in {to_string(t) for t in trees}


def test_sampling_plan_is_uniform_over_unique_templates():
    # template A is 10x as frequent as B in training, yet both get k samples
    trees = [P("[IN:A x ]")] * 10 + [P("[IN:B x [SL:C y ] ]")]
    plan = sampling_plan(trees, samples_per_template=5, seed=1)
    assert Counter(r.template for r in plan) == {
        "[IN:A [mask] ]": 5,
        "[IN:B [mask] [SL:C [mask] ] ]": 5,
    }
    assert [r.sample for r in plan] == [0, 1, 2, 3, 4] * 2
    assert plan[5].source == "[in:b [mask] [sl:c [mask] sl:c] in:b]"
    assert len({r.seed for r in plan}) == 10
    # seeds depend on (plan seed, template, sample) only: stable under re-ordering
    again = sampling_plan(list(reversed(trees)), samples_per_template=5, seed=1)
    assert {(r.template, r.sample): r.seed for r in again} == {
        (r.template, r.sample): r.seed for r in plan
    }
    assert sampling_plan(trees, 5, seed=2)[0].seed != plan[0].seed
    assert unique_templates(trees) == ["[IN:A [mask] ]", "[IN:B [mask] [SL:C [mask] ] ]"]


def test_sampling_plan_draws_templates_without_replacement():
    trees = [P(f"[IN:T{i} x ]") for i in range(50)]
    plan = sampling_plan(trees, samples_per_template=1, n_templates=20, seed=0)
    assert len({r.template for r in plan}) == 20
    with pytest.raises(ValueError):
        sampling_plan(trees, n_templates=51)
    with pytest.raises(ValueError):
        sampling_plan(trees, samples_per_template=0)


def test_collect_samples_counts_invalid_and_duplicates():
    plan = sampling_plan([P("[IN:A x [SL:B y ] ]")], samples_per_template=6)
    outs = [
        "[in:a go to [sl:b work sl:b] in:a]",  # kept
        "[in:a go to [sl:b work sl:b] in:a]",  # duplicate of an earlier synthetic tree
        "[in:a x [sl:b y sl:b] in:a]",  # duplicate of a training tree
        "[in:a to [sl:b home sl:b]",  # unbalanced
        "[in:a to [sl:b home in:a] sl:b]",  # mismatched
        "[in:a to home in:a]",  # valid but another template
    ]
    train = [P("[IN:A x [SL:B y ] ]")]
    kept, rep = collect_samples(plan, outs, train=train)
    assert [to_string(t) for _, t in kept] == [
        "[IN:A go to [SL:B work ] ]",
        "[IN:A go to [SL:B work ] ]",
        "[IN:A x [SL:B y ] ]",
        "[IN:A to home ]",
    ]
    assert rep.as_dict() == {
        "requested": 6,
        "generated": 6,
        "valid": 4,
        "template_matching": 3,
        "invalid": 2,
        "invalid_by_kind": {"unbalanced": 1, "mismatched_close": 1},
        "template_mismatch": 1,
        "duplicate_of_train": 1,
        "duplicate_in_synthetic": 1,
        "kept": 4,
    }
    kept, rep = collect_samples(
        plan,
        outs,
        train=train,
        drop_template_mismatch=True,
        drop_train_duplicates=True,
        drop_synthetic_duplicates=True,
    )
    assert [to_string(t) for _, t in kept] == ["[IN:A go to [SL:B work ] ]"]
    assert kept[0][0] is plan[0]
