"""The metric interface (:mod:`paraamr.metrics.base`): every metric object has it, corpus scores
carry their interval and signature, and the intervals equal independent computations
(a NumPy percentile bootstrap by hand; sacrebleu's corpus BLEU on the resampled lists)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu

from paraamr.errors import InputError
from paraamr.metrics import pairwise
from paraamr.metrics.base import Metric, PairMetric, Score, Sentence, mean_score
from paraamr.metrics.pairwise import Bleu, SelfBleu, Similarity, TokenIoU, TreeEdit

pytestmark = pytest.mark.filterwarnings("ignore:\\nThe hypothesis contains 0 counts:UserWarning")

WORDS = ["the", "a", "cat", "dog", "sat", "ran", "on", "under", "mat", "rug", "quickly", ".", ","]


def _sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def test_every_metric_object_has_the_interface():
    objects = [Bleu(), TokenIoU(), TreeEdit(), TreeEdit(depth=None), SelfBleu(),
               Similarity(None, "m")]  # fmt: skip
    for obj in objects:
        assert isinstance(obj, Metric)
        assert obj.name and obj.key and obj.signature()
    pair_metrics = [o for o in objects if isinstance(o, PairMetric)]
    assert {type(o) for o in pair_metrics} == {Bleu, TokenIoU, TreeEdit, Similarity}
    for cls in pairwise.__all__:
        if isinstance(getattr(pairwise, cls), type) and cls not in ("Sentence", "Score"):
            assert issubclass(getattr(pairwise, cls), Metric), cls


def _bootstrap_by_hand(x: list[float], n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = [np.mean([x[i] for i in rng.integers(0, len(x), len(x))]) for _ in range(n)]
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def test_pair_metric_corpus_score_is_the_mean_with_a_bootstrap_over_pairs():
    hyps, refs = _sentences(40, 1), _sentences(40, 2)
    iou = TokenIoU()
    by_hand = [len(set(h.split()) & set(r.split())) / len(set(h.split()) | set(r.split()))
               for h, r in zip(hyps, refs, strict=True)]  # fmt: skip
    score = iou.corpus_score([h.split() for h in hyps], [r.split() for r in refs],
                             bootstrap=300, seed=4)  # fmt: skip
    assert score.value == pytest.approx(np.mean(by_hand), abs=1e-12)
    assert score.interval == pytest.approx(_bootstrap_by_hand(by_hand, 300, 4), abs=1e-12)
    assert (score.n, score.signature, score.name) == (40, iou.signature(), "IoU")
    with pytest.raises(InputError, match="2 hypotheses and 1 references"):
        iou.corpus_score([["a"], ["b"]], [["a"]])


def test_corpus_bleu_interval_equals_sacrebleu_on_the_resampled_lists():
    hyps, refs = _sentences(30, 3), _sentences(30, 4)
    score = Bleu("sacrebleu-corpus").corpus_score(hyps, refs, bootstrap=50, seed=9)
    assert score.value == pytest.approx(
        sacrebleu.BLEU().corpus_score(hyps, [refs]).score / 100, abs=1e-12
    )
    rng = np.random.default_rng(9)
    draws = []
    for _ in range(50):
        idx = rng.integers(0, 30, 30)
        h, r = [hyps[i] for i in idx], [refs[i] for i in idx]
        draws.append(sacrebleu.BLEU().corpus_score(h, [r]).score / 100)
    want = (float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975)))
    assert score.interval == pytest.approx(want, abs=1e-12)
    assert Bleu("sacrebleu-corpus").corpus_score([], []).value is None


def test_self_bleu_corpus_score_is_the_mean_over_sources():
    groups = [[s.split() for s in _sentences(3, k)] for k in range(6)]
    sb = SelfBleu()
    score = sb.corpus_score(groups, list(range(6)), bootstrap=100, seed=1)
    per_source = [sb.source_score(g, k) for k, g in enumerate(groups)]
    assert score.value == pytest.approx(np.mean(per_source), abs=1e-12)
    assert score.interval == pytest.approx(_bootstrap_by_hand(per_source, 100, 1), abs=1e-12)


def test_score_scales_complements_and_formats_by_hand():
    s = Score("BLEU", 0.2512, "sig", (0.2, 0.3), 12)
    pct = s.complement().scaled(100)
    assert pct.value == pytest.approx(74.88) and pct.interval == pytest.approx((70.0, 80.0))
    assert pct.format() == "1−BLEU = 74.88 [70.00, 80.00] (n=12)"
    assert s.complement(name="distance").name == "distance"
    assert s.scaled(-1).interval == pytest.approx((-0.3, -0.2))  # low end first
    assert pct.signature == "sig" and pct.n == 12
    assert Score("x", None).scaled(100).complement() == Score("1−x", None)


def test_mean_score_reads_any_array_by_its_values():
    from array import array

    assert mean_score("x", array("f", [1.0, 2.0])).value == 1.5  # not read as float64 bytes
    assert mean_score("x", array("i", [1, 2, 6])).value == 3.0
    assert mean_score("x", np.array([1.0, None, 3.0], dtype=object)).value == 2.0


def test_mean_score_leaves_out_none_and_nan_and_refuses_inf():
    assert mean_score("x", [None, 2.0, float("nan"), 4.0]).value == 3.0
    assert mean_score("x", np.array([1.0, np.nan])).n == 1
    with pytest.raises(InputError, match="x: a non-finite value"):
        mean_score("x", [1.0, float("-inf")])


def test_sentence_carries_a_parse():
    from paraamr.parsers.types import Parsed

    s = Sentence.of("I go", Parsed(("I", "go"), "(ROOT (S (NP (PRP I)) (VP (VBP go))))"))
    assert TokenIoU().sentence_score(s, ["I"]) == 0.5
    assert Sentence.of("I go") == Sentence("I go")
