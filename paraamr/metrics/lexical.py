"""Lexical diversity: 1 - BLEU and 1 - token-set IoU between a source and its paraphrase, and
Self-BLEU among a source's paraphrases.

BLEU variants (``BLEU_VARIANTS``):

- ``nltk-sentence`` (default, the ParaAMR scripts'): sentence BLEU of the paraphrase against its
  source, uniform 4-gram weights, no smoothing, on the parser's tokens as written. Identical to
  ``nltk.translate.bleu_score.sentence_bleu(refs=[src], hyp=para)``, including nltk's behaviour
  of giving a zero-match n-gram order precision ``sys.float_info.min`` (a score of ~1e-78, not 0).
- ``sacrebleu-sentence``: ``sacrebleu.sentence_bleu`` (exponential smoothing, effective order,
  13a tokenization of the raw text), divided by 100.
- ``sacrebleu-corpus``: ``sacrebleu.corpus_bleu`` over all pairs (a corpus-level number: there
  is no per-pair value), divided by 100.

>>> round(bleu_nltk("the cat sat on the mat".split(), "the cat sat on the mat".split()), 4)
1.0
>>> token_iou("a b c".split(), "b c d".split())
0.5
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from paraamr.errors import InputError

__all__ = [
    "BLEU_VARIANTS",
    "bleu_nltk",
    "bleu_sacrebleu_sentence",
    "token_iou",
    "token_edit_distance",
    "self_bleu",
    "ngram_stats",
    "CorpusBleu",
]

BLEU_VARIANTS = ("nltk-sentence", "sacrebleu-sentence", "sacrebleu-corpus")


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_stats(
    hyp: Sequence[str], ref: Sequence[str], max_n: int = 4
) -> tuple[list[int], list[int]]:
    """Clipped n-gram matches and hypothesis n-gram counts for orders 1..max_n."""
    matches, totals = [], []
    for n in range(1, max_n + 1):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        matches.append(sum(min(c, r[g]) for g, c in h.items()))
        totals.append(max(0, len(hyp) - n + 1))
    return matches, totals


def bleu_nltk(hyp: Sequence[str], ref: Sequence[str]) -> float:
    """nltk's ``sentence_bleu([ref], hyp)`` with default weights and no smoothing.

    >>> bleu_nltk(["a"], ["b"])
    0.0
    """
    matches, totals = ngram_stats(hyp, ref)
    if matches[0] == 0:
        return 0.0
    # nltk: precision m / max(1, t); a zero precision becomes sys.float_info.min (method0)
    log_p = math.fsum(
        0.25 * math.log(m / max(1, t) if m else sys.float_info.min)
        for m, t in zip(matches, totals, strict=True)
    )
    c, r = len(hyp), len(ref)
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return bp * math.exp(log_p)


def bleu_sacrebleu_sentence(hyp: str, ref: str) -> float:
    """sacrebleu's smoothed sentence BLEU on raw text, in [0, 1]."""
    import sacrebleu

    return sacrebleu.sentence_bleu(hyp, [ref]).score / 100.0


@lru_cache(maxsize=1)
def _sacrebleu():
    """One sacrebleu ``BLEU`` object (13a tokenizer, no lowercasing) reused for every pair."""
    import sacrebleu

    return sacrebleu.BLEU()


class CorpusBleu:
    """Accumulates sacrebleu corpus-BLEU statistics pair by pair; mergeable across shards.

    >>> cb = CorpusBleu(); cb.add("the cat sat .", "the cat sat ."); round(cb.score(), 4)
    1.0
    """

    def __init__(self) -> None:
        self.stats = [0] * 10  # sacrebleu layout: hyp_len, ref_len, (correct, total) x 4

    def add(self, hyp: str, ref: str) -> None:
        s = _sacrebleu()._extract_corpus_statistics([hyp], [[ref]])[0]
        self.stats = [a + int(b) for a, b in zip(self.stats, s, strict=True)]

    def merge(self, other_stats: Sequence[int]) -> None:
        self.stats = [a + int(b) for a, b in zip(self.stats, other_stats, strict=True)]

    def score(self) -> float:
        if self.stats[0] == 0:
            return float("nan")
        return _sacrebleu()._compute_score_from_stats(list(self.stats)).score / 100.0


def token_iou(a: Sequence[str], b: Sequence[str]) -> float:
    """|set(a) & set(b)| / |set(a) | set(b)| on tokens as written (case-sensitive)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    if not union:
        raise InputError("token_iou of two empty token lists is undefined")
    return len(sa & sb) / len(union)


def token_edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token lists (insert, delete, substitute: cost 1 each),
    the number ``nltk.edit_distance`` gives for lists, without nltk (a dev-only dependency).

    >>> token_edit_distance("the cat sat".split(), "a cat sat down".split())
    2
    >>> token_edit_distance([], ["x", "y"])
    2
    """
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def self_bleu(paraphrases: Sequence[Sequence[str]], num: int = 5) -> float:
    """Self-BLEU of one source's paraphrases, as the ParaAMR authors' Self-BLEU script computes it.

    The list (in the order given) is doubled until it has ``num`` entries and cut to ``num``;
    each entry is scored with :func:`bleu_nltk` against each other entry (all ordered pairs
    ``i != j``) and the scores are averaged (``numpy.mean``, as the script). Higher means the
    paraphrases are more alike. A single paraphrase is compared with copies of itself (1.0 from
    four tokens on).
    The script shuffles each source's paraphrases first (unseeded); callers that want the same
    sampling pass a shuffled list.

    Args:
        paraphrases: token lists of the paraphrases (the parser's tokens).
        num: paraphrases compared (the script's ``--num``, default 5).

    Returns:
        Self-BLEU in [0, 1].

    Raises:
        ValueError: for an empty list or ``num < 2``.

    >>> self_bleu([["a", "b", "c", "d"]])
    1.0
    >>> a, b = "the cat sat on mat".split(), "the cat sat on rug".split()
    >>> round(self_bleu([a, b], num=2), 4)  # both ways (4/5 * 3/4 * 2/3 * 1/2) ** (1/4)
    0.6687
    """
    if not paraphrases:
        raise ValueError("self_bleu needs at least one paraphrase")
    if num < 2:
        raise ValueError(f"self_bleu compares at least 2 paraphrases, num={num}")
    padded = list(paraphrases)
    while len(padded) < num:
        padded += padded
    padded = padded[:num]
    scores = [bleu_nltk(padded[j], padded[i]) for i in range(num) for j in range(num) if i != j]
    return float(np.mean(scores))
