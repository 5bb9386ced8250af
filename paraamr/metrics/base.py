"""The metric interface every measure follows, and the score it returns.

Modelled on sacrebleu's ``Metric`` / ``Score`` pair: a metric object holds its settings, scores
one pair (:meth:`PairMetric.sentence_score`), many pairs (:meth:`PairMetric.pair_scores`,
batched where that pays) or a corpus (:meth:`PairMetric.corpus_score`), and names itself
(:meth:`Metric.signature`, built from the instance's own settings). A corpus score is a
:class:`Score`: the value, its 95% bootstrap interval when asked for, how many values it
averages, and the signature of the metric that made it.

A pair is ``(hypothesis, reference)``, the paraphrase first and its source second (BLEU is
not symmetric; IoU, TED and the cosine are, and some callers pass ``(source, paraphrase)``
to them). Each side is a :class:`Sentence` (text, and the parser's
tokens and tree where the metric needs them) or the metric's own unit: text for the
similarity and sacrebleu, a token list for nltk BLEU and IoU, a bracket string for TED.

>>> from paraamr.metrics.pairwise import TokenIoU
>>> iou = TokenIoU()
>>> iou.sentence_score(["a", "b"], ["b", "c"])
0.3333333333333333
>>> s = iou.corpus_score([["a"], ["a", "b"]], [["a"], ["b"]])
>>> s.value, s.n, s.signature
(0.75, 2, 'token-set,tok:parser,case:as-written')
>>> s.scaled(100).format(digits=1)
'IoU = 75.0 (n=2)'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from paraamr.errors import InputError

__all__ = ["Sentence", "Score", "Metric", "PairMetric", "mean_score"]


@dataclass(frozen=True)
class Sentence:
    """One side of a pair: the raw text and, where a parser has run, its tokens and tree.

    >>> from paraamr.parsers.types import Parsed
    >>> Sentence.of("I know .", Parsed(("I", "know", "."), "(ROOT (S (NP (PRP I))))")).tokens
    ('I', 'know', '.')
    """

    text: str
    tokens: Sequence[str] | None = None
    tree: str | None = None

    @classmethod
    def of(cls, text: str, parsed: Any = None) -> Sentence:
        """The text with the tokens and tree of a :class:`~paraamr.parsers.types.Parsed`."""
        if parsed is None:
            return cls(text)
        return cls(text, parsed.tokens, parsed.tree)


@dataclass(frozen=True)
class Score:
    """A corpus-level number with its interval and the signature of the metric behind it.

    Args:
        name: the metric's display name (``BLEU``, ``TED-3``, ...).
        value: the score (``None`` when nothing was scored).
        signature: the metric's :meth:`Metric.signature`.
        interval: the 95% percentile-bootstrap interval (``None`` without resampling).
        n: how many values the score averages (pairs, or sources for Table 2).

    >>> Score("TED-3", 15.0512, "d3:3", (13.43, 16.771), 87).format()
    'TED-3 = 15.05 [13.43, 16.77] (n=87)'
    >>> Score("sim", None).format()
    'sim = n/a (n=0)'
    """

    name: str
    value: float | None
    signature: str = ""
    interval: tuple[float, float] | None = None
    n: int = 0

    def scaled(self, factor: float) -> Score:
        """The score and its interval multiplied by ``factor`` (fractions to percent).

        >>> Score("x", 0.5, interval=(0.4, 0.6)).scaled(-1).interval
        (-0.6, -0.4)
        """
        if self.value is None:
            return self
        lo_hi = self.interval
        ci = None if lo_hi is None else tuple(sorted((lo_hi[0] * factor, lo_hi[1] * factor)))
        return replace(self, value=self.value * factor, interval=ci)

    def complement(self, whole: float = 1.0, name: str | None = None) -> Score:
        """``whole - score`` with the interval flipped (BLEU to the paper's 1 − BLEU), named
        ``name`` (default: ``1−<name>``).

        >>> c = Score("BLEU", 0.25, interval=(0.2, 0.3)).complement()
        >>> c.name, c.interval
        ('1−BLEU', (0.7, 0.8))
        """
        name = f"1−{self.name}" if name is None else name
        if self.value is None:
            return replace(self, name=name)
        ci = None if self.interval is None else (whole - self.interval[1], whole - self.interval[0])
        return replace(self, name=name, value=whole - self.value, interval=ci)

    def format(self, digits: int = 2) -> str:
        """``name = value [low, high] (n=N)``."""
        if self.value is None:
            return f"{self.name} = n/a (n={self.n})"
        ci = ""
        if self.interval is not None:
            ci = " [{:.{d}f}, {:.{d}f}]".format(*self.interval, d=digits)
        return f"{self.name} = {self.value:.{digits}f}{ci} (n={self.n})"


def mean_score(
    name: str,
    values: Iterable[float | None] | np.ndarray,
    signature: str = "",
    *,
    bootstrap: int = 0,
    seed: int = 0,
) -> Score:
    """The mean of the finite values (``None`` and NaN stand for "not scored" and are left
    out) and, with ``bootstrap`` resamples, its 95% percentile interval
    (:func:`paraamr.metrics.aggregate.bootstrap_ci`). A NumPy array or ``array('d')`` is read
    in place, so the merge of a million sources holds no Python floats.

    >>> mean_score("x", [1.0, None, float("nan"), 2.0, 6.0]).value
    3.0
    >>> mean_score("x", [float("nan")], bootstrap=10)
    Score(name='x', value=None, signature='', interval=None, n=0)
    >>> mean_score("x", [1.0, float("inf")])
    Traceback (most recent call last):
    paraamr.errors.InputError: x: a non-finite value (inf) cannot enter a mean
    """
    from paraamr.metrics.aggregate import bootstrap_ci

    if isinstance(values, np.ndarray) and values.dtype != object:
        x = values.astype(np.float64, copy=False)
    elif getattr(values, "typecode", None) == "d":  # array('d'): a buffer, read without copying
        x = np.frombuffer(values, dtype=np.float64) if len(values) else np.empty(0)
    else:
        x = np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
    x = x[~np.isnan(x)]
    if np.isinf(x).any():
        bad = x[np.isinf(x)][0]
        raise InputError(f"{name}: a non-finite value ({bad}) cannot enter a mean")
    if not x.size:
        return Score(name, None, signature)
    ci = bootstrap_ci(x, bootstrap, seed=seed) if bootstrap else None
    return Score(name, float(x.mean()), signature, ci, int(x.size))


class Metric:
    """What every metric object has: a display ``name``, a row ``key`` and a signature."""

    name: ClassVar[str]
    key: ClassVar[str]

    def signature(self) -> str:
        """This metric's part of a signature line, from the instance's own settings."""
        raise NotImplementedError


class PairMetric(Metric):
    """A metric of (hypothesis, reference) pairs. Subclasses define :meth:`sentence_score`
    or, where batching pays (embeddings, trees), :meth:`pair_scores`."""

    def sentence_score(self, hyp: Any, ref: Any) -> float:
        """The score of one pair."""
        return self.pair_scores([(hyp, ref)])[0]

    def pair_scores(self, pairs: Iterable[tuple[Any, Any]]) -> list[float]:
        """The score of each pair, in order."""
        return [self.sentence_score(h, r) for h, r in pairs]

    def corpus_score(
        self,
        hyps: Sequence[Any],
        refs: Sequence[Any],
        *,
        bootstrap: int = 0,
        seed: int = 0,
    ) -> Score:
        """The mean over aligned pairs, with a bootstrap interval over pairs when asked."""
        if len(hyps) != len(refs):
            raise InputError(f"{self.name}: {len(hyps)} hypotheses and {len(refs)} references")
        vals = self.pair_scores(list(zip(hyps, refs, strict=True)))
        return mean_score(self.name, vals, self.signature(), bootstrap=bootstrap, seed=seed)
