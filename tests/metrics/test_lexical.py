"""Lexical metrics against independent implementations (nltk, sacrebleu, scipy) on real pairs."""

import re
import warnings

import pytest

from paraamr.corpus import read_corpus
from paraamr.metrics.lexical import (
    CorpusBleu,
    bleu_nltk,
    bleu_sacrebleu_sentence,
    token_iou,
)

TOK = re.compile(r"\w+|[^\w\s]")


@pytest.fixture(scope="module")
def real_pairs(parabank_eval):
    pairs = []
    for r in read_corpus(parabank_eval, "parabank-eval-parabank1"):
        pairs += [(r.text, p.text) for p in r.paraphrases[:3]]
    return pairs[:600]


def test_bleu_default_equals_nltk_sentence_bleu(real_pairs):
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for src, para in real_pairs:
            s, p = TOK.findall(src), TOK.findall(para)
            assert bleu_nltk(p, s) == pytest.approx(sentence_bleu([s], p), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(
    ("hyp", "ref"),
    [
        ("a", "a"),
        ("a b", "a b c d e"),
        ("x y z", "a b c"),
        ("a b c d", "a b c d"),
        ("the the the the", "the cat"),
        ("a b c d e f", "a b x d e f"),
    ],
)
def test_bleu_edge_cases_equal_nltk(hyp, ref):
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = sentence_bleu([ref.split()], hyp.split())
    assert bleu_nltk(hyp.split(), ref.split()) == pytest.approx(expected, rel=1e-12, abs=0)


def test_sacrebleu_variants_equal_sacrebleu(real_pairs):
    import sacrebleu

    for src, para in real_pairs[:100]:
        assert bleu_sacrebleu_sentence(para, src) == pytest.approx(
            sacrebleu.sentence_bleu(para, [src]).score / 100
        )
    cb = CorpusBleu()
    for src, para in real_pairs:
        cb.add(para, src)
    hyps = [p for _, p in real_pairs]
    refs = [s for s, _ in real_pairs]
    assert cb.score() == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score / 100)


def test_corpus_bleu_merges_like_one_pass(real_pairs):
    one, a, b = CorpusBleu(), CorpusBleu(), CorpusBleu()
    for k, (s, p) in enumerate(real_pairs):
        one.add(p, s)
        (a if k % 2 else b).add(p, s)
    a.merge(b.stats)
    assert a.score() == pytest.approx(one.score())


def test_iou_equals_scipy_jaccard(real_pairs):
    import numpy as np
    from scipy.spatial.distance import jaccard

    for src, para in real_pairs[:200]:
        s, p = TOK.findall(src), TOK.findall(para)
        vocab = sorted(set(s) | set(p))
        u = np.array([w in set(s) for w in vocab])
        v = np.array([w in set(p) for w in vocab])
        assert 1 - token_iou(s, p) == pytest.approx(jaccard(u, v))


def test_iou_is_case_sensitive_and_rejects_empty():
    assert token_iou(["The"], ["the"]) == 0.0
    with pytest.raises(ValueError):
        token_iou([], [])


def test_token_edit_distance_equals_nltk_on_random_token_lists():
    import random

    from nltk import edit_distance

    from paraamr.metrics.lexical import token_edit_distance

    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        assert token_edit_distance(a, b) == edit_distance(a, b), (a, b)
