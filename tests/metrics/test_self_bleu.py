"""Self-BLEU equals the ParaAMR authors' Self-BLEU script (tests/metrics/ted_originals.py) on
real data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ted_originals import paraamr_script_self_bleu

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import read_corpus
from paraamr.metrics.lexical import self_bleu


@pytest.fixture(scope="module")
def parabank1(parabank_eval):
    """ParaBank-1 paraphrases of the 400 ParaBank-Eval sources (3 to 30 per source)."""
    return list(read_corpus(parabank_eval, "parabank-eval-parabank1", SkipLog("raise")))


def _tokens(text: str) -> str:
    return " ".join(text.split())  # the script's para_tokens: tokens joined by one space


def test_self_bleu_equals_the_authors_script(parabank1):
    rng = np.random.RandomState(0)
    n_checked, sizes = 0, set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns on zero n-gram overlaps
        for r in parabank1[::4]:  # 100 sources, 25 of each length (nltk is slow)
            paras = [_tokens(p.text) for p in r.paraphrases]
            rng.shuffle(paras)  # the script shuffles; both sides get the same order
            for k in (1, 3, len(paras)):  # padding by repetition, and 5 of many
                want = paraamr_script_self_bleu(paras[:k])
                got = self_bleu([p.split(" ") for p in paras[:k]])
                assert got == want, (r.text, paras[:k])
                n_checked += 1
                sizes.add(min(k, 6))  # 6: more paraphrases than the 5 compared
    assert n_checked == 3 * 100 and sizes == {1, 3, 4, 5, 6}


def test_single_paraphrase_and_bad_input():
    assert self_bleu([["a", "b", "c", "d"]]) == 1.0  # five copies of one sentence
    assert self_bleu([["a", "b"]]) < 1e-100  # nltk: no 3-grams, so (almost) zero
    with pytest.raises(ValueError):
        self_bleu([])
    with pytest.raises(ValueError):
        self_bleu([["a"]], num=1)
