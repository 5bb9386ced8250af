"""The metric objects every stage scores with: one per measure, each following
:mod:`paraamr.metrics.base` (``sentence_score`` / ``pair_scores`` / ``corpus_score`` returning a
:class:`~paraamr.metrics.base.Score`, and ``signature()``).

Table 2 (:mod:`paraamr.diversity.scoring`), the validity study
(:mod:`paraamr.validity.measures`), Table 6's evaluation (:mod:`paraamr.scpn.evaluate`), the AMR
models' scores (:mod:`paraamr.amrlm.evaluate`) and ``paraamr metric`` all score through these
objects, so a number of one name is computed one way everywhere, and the signature that names
it comes from the object that computed it (the way sacrebleu's ``BLEU`` object carries its own
signature):

- :class:`Bleu`: ``nltk-sentence`` (the ParaAMR scripts', on the parser's tokens),
  ``sacrebleu-sentence`` and ``sacrebleu-corpus`` (13a tokenization of the raw text); scores in
  [0, 1];
- :class:`TokenIoU`: token-set intersection over union on the parser's tokens;
- :class:`TreeEdit`: TED at a cut depth (TED-3) or on the full trees (``depth=None``: TED-F),
  any preset of :data:`paraamr.metrics.ted.VARIANTS`;
- :class:`Similarity`: cosine of sentence embeddings (any sentence-transformers-like encoder);
- :class:`SelfBleu`: the authors' Self-BLEU among one source's paraphrases.

:func:`paraamr.metrics.signature.metric_signature` puts the signatures of Table 2 together.

>>> b = Bleu("nltk-sentence")
>>> b.signature()
'nltk-sentence,w:uniform4,tok:parser,case:as-written'
>>> same = Sentence("the cat sat on the mat", "the cat sat on the mat".split())
>>> b.sentence_score(same, same)
1.0
>>> TokenIoU(lowercase=True).sentence_score(["A", "b"], ["a", "c"])
0.3333333333333333
>>> TreeEdit().signature(), TreeEdit(depth=None).signature()
('paraamr-v2,d3:3,unit-cost,words:no,pos:yes,kernel:edist', \
'paraamr-v2,full,unit-cost,words:no,pos:yes,kernel:edist')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from paraamr.errors import ConfigError, InputError
from paraamr.metrics.base import Metric, PairMetric, Score, Sentence, mean_score
from paraamr.metrics.lexical import (
    BLEU_VARIANTS,
    CorpusBleu,
    bleu_nltk,
    bleu_sacrebleu_sentence,
    self_bleu,
    token_iou,
)

__all__ = [
    "Bleu",
    "TokenIoU",
    "TreeEdit",
    "Similarity",
    "SelfBleu",
    "Sentence",
    "Score",
    "similarity_field",
]


def _case(lowercase: bool) -> str:
    return "lower" if lowercase else "as-written"


def _fold(tokens: Sequence[str], lowercase: bool) -> Sequence[str]:
    return [t.lower() for t in tokens] if lowercase else tokens


def _text(side: Sentence | str) -> str:
    """The raw text of one side of a pair."""
    return side.text if isinstance(side, Sentence) else side


def _tokens(side: Sentence | Sequence[str], who: str) -> Sequence[str]:
    """The parser's tokens of one side (a :class:`Sentence` with tokens, or a token list)."""
    if isinstance(side, Sentence):
        if side.tokens is None:
            raise InputError(f"{who} scores the parser's tokens: the Sentence has none")
        return side.tokens
    if isinstance(side, str):
        raise InputError(f"{who} scores the parser's tokens: pass a Sentence or a token list")
    return side


def _tree(side: Sentence | str) -> str:
    """The bracket string of one side (a :class:`Sentence` with a tree, or the string)."""
    if isinstance(side, Sentence):
        if side.tree is None:
            raise InputError("TED scores parse trees: the Sentence has none")
        return side.tree
    return side


@dataclass(frozen=True)
class Bleu(PairMetric):
    """BLEU of a hypothesis against one reference, in [0, 1].

    Args:
        variant: one of :data:`~paraamr.metrics.lexical.BLEU_VARIANTS`.
        lowercase: lowercase tokens (``nltk-sentence``) or text (sacrebleu) first.

    ``sacrebleu-corpus`` has no per-pair value: :meth:`corpus_score` pools the n-gram counts of
    all pairs (sacrebleu's corpus BLEU), and its bootstrap resamples pairs and pools again.

    >>> round(Bleu("sacrebleu-corpus").corpus_score(["the cat sat ."], ["the cat sat ."]).value, 6)
    1.0
    >>> Bleu("sacrebleu-corpus").sentence_score("a", "a")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: BLEU sacrebleu-corpus has no per-pair value (use corpus_score())
    """

    variant: str = "nltk-sentence"
    lowercase: bool = False
    name: ClassVar[str] = "BLEU"
    key: ClassVar[str] = "bleu"

    def __post_init__(self) -> None:
        if self.variant not in BLEU_VARIANTS:
            raise ConfigError(f"metrics.bleu must be one of {BLEU_VARIANTS}, got {self.variant!r}")

    @property
    def per_pair(self) -> bool:
        """Whether each pair has a value (not for corpus BLEU)."""
        return self.variant != "sacrebleu-corpus"

    def signature(self) -> str:
        """Variant, weights, tokenization, case."""
        tok = ",w:uniform4,tok:parser" if self.variant == "nltk-sentence" else ",tok:13a"
        return f"{self.variant}{tok},case:{_case(self.lowercase)}"

    def _fold_text(self, s: str) -> str:
        return s.lower() if self.lowercase else s

    def sentence_score(self, hyp: Sentence | Any, ref: Sentence | Any) -> float:
        """BLEU of ``hyp`` against ``ref``; ``nltk-sentence`` scores the parser's tokens
        (a :class:`Sentence` with tokens, or token lists), the sacrebleu variant the raw text.

        Raises:
            InputError: corpus BLEU (no per-pair value), or ``nltk-sentence`` without tokens.
        """
        if self.variant == "nltk-sentence":
            who = "BLEU nltk-sentence"
            h, r = _tokens(hyp, who), _tokens(ref, who)
            return bleu_nltk(_fold(h, self.lowercase), _fold(r, self.lowercase))
        if self.variant == "sacrebleu-sentence":
            return bleu_sacrebleu_sentence(self._fold_text(_text(hyp)), self._fold_text(_text(ref)))
        raise InputError(f"BLEU {self.variant} has no per-pair value (use corpus_score())")

    def accumulator(self) -> CorpusBleu:
        """Corpus-BLEU statistics to add pairs to (mergeable across shards)."""
        return CorpusBleu()

    def add(self, acc: CorpusBleu, hyp: Sentence | str, ref: Sentence | str) -> None:
        """Add one pair's raw text (case folded as the object says) to ``acc``."""
        acc.add(self._fold_text(_text(hyp)), self._fold_text(_text(ref)))

    def corpus_score(
        self, hyps: Sequence[Any], refs: Sequence[Any], *, bootstrap: int = 0, seed: int = 0
    ) -> Score:
        """Sentence variants: the mean over pairs (:class:`~paraamr.metrics.base.PairMetric`).
        ``sacrebleu-corpus``: sacrebleu's corpus BLEU of the aligned raw texts (13a, one
        reference each), with a percentile interval over ``bootstrap`` resamples of the pairs."""
        if self.per_pair:
            return super().corpus_score(hyps, refs, bootstrap=bootstrap, seed=seed)
        if len(hyps) != len(refs):
            raise InputError(f"corpus BLEU of {len(hyps)} hypotheses and {len(refs)} references")
        if not hyps:
            return Score(self.name, None, self.signature())
        import sacrebleu

        h = [self._fold_text(_text(x)) for x in hyps]
        r = [self._fold_text(_text(x)) for x in refs]
        bleu = sacrebleu.BLEU()
        value = bleu.corpus_score(h, [r]).score / 100.0
        ci = None
        if bootstrap:
            stats = np.asarray(bleu._extract_corpus_statistics(h, [r]), dtype=np.int64)
            rng = np.random.default_rng(seed)
            draws = [
                bleu._compute_score_from_stats(
                    stats[rng.integers(0, len(h), len(h))].sum(axis=0).tolist()
                ).score
                / 100.0
                for _ in range(bootstrap)
            ]
            ci = (float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975)))
        return Score(self.name, value, self.signature(), ci, len(h))

    @staticmethod
    def sacrebleu_signature() -> str:
        """sacrebleu's own signature of corpus BLEU (``nrefs:1|case:mixed|...``; sacrebleu
        knows the number of references only after scoring, so one pair is scored first)."""
        import sacrebleu

        bleu = sacrebleu.BLEU()
        bleu.corpus_score(["a"], [["a"]])
        return str(bleu.get_signature())


@dataclass(frozen=True)
class TokenIoU(PairMetric):
    """|set(a) & set(b)| / |set(a) | set(b)| on the parser's tokens (a :class:`Sentence` with
    tokens, or token lists)."""

    lowercase: bool = False
    name: ClassVar[str] = "IoU"
    key: ClassVar[str] = "iou"

    def signature(self) -> str:
        return f"token-set,tok:parser,case:{_case(self.lowercase)}"

    def sentence_score(self, hyp: Sentence | Any, ref: Sentence | Any) -> float:
        a, b = _tokens(hyp, "IoU"), _tokens(ref, "IoU")
        return token_iou(_fold(a, self.lowercase), _fold(b, self.lowercase))


@dataclass(frozen=True)
class TreeEdit(PairMetric):
    """Tree edit distance of word-free trees (a :class:`Sentence` with a tree, or PTB bracket
    strings), cut at ``depth`` (TED-3: 3) or full (``depth=None``: TED-F).

    Args:
        variant: a preset of :data:`paraamr.metrics.ted.VARIANTS`.
        depth: the cut depth (TED-3: 3); ``None`` for the full trees (TED-F).
        kernel: ``edist`` or ``zss`` (same numbers; speed).

    >>> a, b = "(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go))))"
    >>> TreeEdit().sentence_score(a, b), TreeEdit().cut_and_full([(a, b)])
    (3, [(3, 3)])
    """

    variant: str = "paraamr"
    depth: int | None = 3
    kernel: str = "edist"
    key: ClassVar[str] = "ted"

    def __post_init__(self) -> None:
        from paraamr.metrics.ted import VARIANTS

        if self.variant not in VARIANTS:
            raise ConfigError(
                f"ted.variant: unknown TED variant {self.variant!r}; one of {tuple(VARIANTS)}"
            )

    @property
    def name(self) -> str:  # type: ignore[override]
        return "TED-F" if self.depth is None else f"TED-{self.depth}"

    def signature(self) -> str:
        """Preset with its version, the cut (``d3:3`` or ``full``), costs, kernel."""
        from paraamr.metrics.ted import VARIANTS

        cut = "full" if self.depth is None else f"d3:{self.depth}"
        return (
            f"{VARIANTS[self.variant].describe()},{cut},unit-cost,words:no,pos:yes,"
            f"kernel:{self.kernel}"
        )

    def pair_scores(self, pairs: Iterable[tuple[Any, Any]]) -> list[float]:
        """TED of each pair at this object's depth only (an edit count; a fraction for
        ``qcpg``): a TED-3 does not pay for the full trees' distance.

        Raises:
            InputError: a pair with an unreadable tree (its message).
        """
        from paraamr.errors import TreeError
        from paraamr.metrics.ted import tree_edit_distance

        out = []
        for a, b in pairs:
            try:
                ted = tree_edit_distance(
                    _tree(a), _tree(b), depth=self.depth, variant=self.variant, kernel=self.kernel
                )
            except TreeError as e:
                raise InputError(f"TED: unreadable tree: {e}") from None
            out.append(ted)
        return out

    def cut_and_full(
        self,
        pairs: Iterable[tuple[Any, Any]],
        pool: Executor | None = None,
        workers: int = 1,
    ) -> list[tuple[float, float] | str]:
        """``(cut, full)`` TED per pair from one reading of each tree (Table 2 reports both),
        or the error message of a pair with an unreadable tree
        (:func:`paraamr.metrics.ted.ted_batch`); with ``pool``, in parts spread over
        ``workers`` processes (same results, same order).

        Raises:
            InputError: for a TED-F object (``depth=None``: there is no cut to report).
        """
        from paraamr.metrics.ted import ted_batch

        if self.depth is None:
            raise InputError("cut_and_full needs a cut depth: TreeEdit(depth=3), not depth=None")
        args = (self.depth, self.variant, self.kernel)
        trees = [(_tree(a), _tree(b)) for a, b in pairs]
        if pool is None:
            return ted_batch(trees, *args)
        size = max(64, -(-len(trees) // (4 * workers)))
        parts = [trees[i : i + size] for i in range(0, len(trees), size)]
        futures = [pool.submit(ted_batch, p, *args) for p in parts]
        return [x for f in futures for x in f.result()]


def similarity_field(label: str) -> str:
    """The similarity part of a signature for an encoder label
    (:func:`paraamr.metrics.semantic.similarity_label`).

    >>> similarity_field("minilm,openvino")
    'cos(minilm,openvino)'
    """
    return f"cos({label})"


class Similarity(PairMetric):
    """Cosine similarity of sentence embeddings (a :class:`Sentence` or text on each side),
    each distinct sentence embedded once.

    Args:
        encoder: anything with sentence-transformers' ``encode`` (``None``: only the
            signature, for building a signature without a model).
        label: the encoder's name in the signature (``minilm``, ``minilm,openvino``, ...).
        batch_size: sentences per encoder batch.
    """

    name: ClassVar[str] = "similarity"
    key: ClassVar[str] = "sim"

    def __init__(self, encoder: Any, label: str, batch_size: int = 128) -> None:
        self.encoder, self.label, self.batch_size = encoder, label, batch_size

    def signature(self) -> str:
        return similarity_field(self.label)

    def pair_scores(self, pairs: Iterable[tuple[Any, Any]]) -> list[float]:
        """Cosine of each pair (:func:`paraamr.metrics.semantic.cosine_pairs`)."""
        return self.cosines(pairs).tolist()

    def cosines(self, pairs: Iterable[tuple[Any, Any]]) -> np.ndarray:
        """:meth:`pair_scores` as one float array (no Python floats for a large corpus)."""
        from paraamr.metrics.semantic import cosine_pairs

        texts = [(_text(a), _text(b)) for a, b in pairs]
        if self.encoder is None and texts:
            raise InputError(f"Similarity({self.label}) has no encoder to score with")
        return cosine_pairs(texts, self.encoder, self.batch_size)


@dataclass(frozen=True)
class SelfBleu(Metric):
    """The authors' Self-BLEU among one source's paraphrases (token lists, the parser's
    tokens), in an order drawn from the source id (their script shuffles unseeded; this
    shuffle is the same in every run and shard).

    >>> SelfBleu().source_score([["a", "b", "c", "d"]], source_id=0)  # copies of one
    1.0
    >>> SelfBleu().corpus_score([[["a", "b"]], [["a", "b", "c", "d"]]], [0, 1]).value
    0.5
    """

    lowercase: bool = False
    num: int = 5
    name: ClassVar[str] = "Self-BLEU"
    key: ClassVar[str] = "selfbleu"

    def signature(self) -> str:
        return (
            f"nltk-sentence,n:{self.num},pad:repeat,order:rng(source-id),"
            f"case:{_case(self.lowercase)}"
        )

    def source_score(self, paraphrases: Sequence[Sequence[str]], source_id: int) -> float:
        """Self-BLEU of one source's paraphrases."""
        order = np.random.default_rng(source_id).permutation(len(paraphrases))
        toks = [_fold(paraphrases[k], self.lowercase) for k in order]
        return self_bleu(toks, self.num)

    def corpus_score(
        self,
        groups: Sequence[Sequence[Sequence[str]]],
        source_ids: Sequence[int],
        *,
        bootstrap: int = 0,
        seed: int = 0,
    ) -> Score:
        """The mean over sources, with a bootstrap interval over sources when asked."""
        if len(groups) != len(source_ids):
            raise InputError(f"Self-BLEU: {len(groups)} sources and {len(source_ids)} source ids")
        vals = [self.source_score(g, i) for g, i in zip(groups, source_ids, strict=True)]
        return mean_score(self.name, vals, self.signature(), bootstrap=bootstrap, seed=seed)
