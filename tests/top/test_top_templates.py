"""Templates, their statistics and frequency buckets, on hand-built cases."""

from __future__ import annotations

from collections import Counter

import pytest

from paraamr.top.templates import (
    BUCKETS,
    bucket_counts,
    bucket_of,
    matches_template,
    parse_template,
    plot_rank_frequency,
    template_counts,
    template_stats,
    template_string,
)
from paraamr.top.trees import TopTreeError, parse_tree, to_string


def P(s: str):
    return parse_tree(s)


@pytest.mark.parametrize(
    ("tree", "tmpl"),
    [
        ("[IN:A x ]", "[IN:A [mask] ]"),
        ("[IN:A x y z ]", "[IN:A [mask] ]"),
        ("[IN:A [SL:B x ] ]", "[IN:A [SL:B [mask] ] ]"),
        (
            "[IN:A x [SL:B y ] z w [SL:C v ] ]",
            "[IN:A [mask] [SL:B [mask] ] [mask] [SL:C [mask] ] ]",
        ),
        ("[IN:A [SL:B x ] [SL:C y ] ]", "[IN:A [SL:B [mask] ] [SL:C [mask] ] ]"),
        (
            "[IN:A how far [SL:B [IN:C [SL:D my ] home ] ] ]",
            "[IN:A [mask] [SL:B [IN:C [SL:D [mask] ] [mask] ] ] ]",
        ),
    ],
)
def test_template_masks_each_maximal_run_of_words(tree, tmpl):
    assert template_string(P(tree)) == tmpl
    assert to_string(parse_template(tmpl)) == tmpl


def test_template_strings_parse_only_as_templates():
    with pytest.raises(TopTreeError):
        parse_tree("[IN:A [mask] ]")
    assert parse_template("[IN:A [mask] [SL:B ] ]").children[1].children == ()


def test_matches_template():
    assert matches_template(P("[IN:A a b [SL:B c ] ]"), "[IN:A [mask] [SL:B [mask] ] ]")
    assert matches_template(P("[IN:A a b [SL:B c ] ]"), "[IN:A  [mask] [SL:B [mask] ] ] ")
    assert not matches_template(P("[IN:A [SL:B c ] ]"), "[IN:A [mask] [SL:B [mask] ] ]")
    assert not matches_template(P("[IN:A a [SL:C c ] ]"), "[IN:A [mask] [SL:B [mask] ] ]")


TRAIN = [
    *["[IN:A x ]"] * 6,  # f = 6
    *["[IN:B x [SL:C y ] ]"] * 5,  # f = 5 (boundary: f >= 5)
    *["[IN:B x [SL:C y ] z ]"] * 4,  # f = 4 (boundary: f < 5)
    "[IN:D x ]",  # f = 1
]


def test_counts_and_stats_by_hand():
    counts = template_counts(P(s) for s in TRAIN)
    assert counts == Counter(
        {
            "[IN:A [mask] ]": 6,
            "[IN:B [mask] [SL:C [mask] ] ]": 5,
            "[IN:B [mask] [SL:C [mask] ] [mask] ]": 4,
            "[IN:D [mask] ]": 1,
        }
    )
    st = template_stats(counts, top_k=2)
    assert (st.n_examples, st.n_templates, st.singleton_templates) == (16, 4, 1)
    assert st.top == [("[IN:A [mask] ]", 6), ("[IN:B [mask] [SL:C [mask] ] ]", 5)]
    assert st.top10_share == 1.0 and st.singleton_example_share == 1 / 16
    assert st.freq_of_freq == {1: 1, 4: 1, 5: 1, 6: 1}
    # slope of log f on log rank for f = 6, 5, 4, 1: computed by hand with numpy's formula
    import numpy as np

    x, y = np.log([1, 2, 3, 4]), np.log([6, 5, 4, 1])
    assert st.powerlaw_slope == pytest.approx(np.polyfit(x, y, 1)[0])


def test_buckets_by_hand():
    counts = template_counts(P(s) for s in TRAIN)
    test = [
        "[IN:A other words ]",  # f=6  -> f>=5
        "[IN:B q [SL:C r ] ]",  # f=5  -> f>=5
        "[IN:B q [SL:C r ] s ]",  # f=4  -> f<5
        "[IN:D q ]",  # f=1  -> f<5
        "[IN:B [SL:C r ] ]",  # unseen (no leading words) -> f=0
        "[IN:E q ]",  # unseen label -> f=0
        "[IN:A q [SL:C r ] ]",  # unseen combination -> f=0
    ]
    assert bucket_counts([P(s) for s in test], counts) == {"f>=5": 2, "f<5": 2, "f=0": 3}
    assert list(BUCKETS) == ["f>=5", "f<5", "f=0"]
    assert bucket_of(4, threshold=4) == "f>=5"
    with pytest.raises(ValueError):
        bucket_of(-1)


def test_plot_is_written(tmp_path):
    counts = template_counts(P(s) for s in TRAIN)
    png, pdf = plot_rank_frequency(counts, tmp_path / "sub" / "rf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and pdf.read_bytes()[:4] == b"%PDF"
