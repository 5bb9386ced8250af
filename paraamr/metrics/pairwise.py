"""The metric objects every stage scores pairs with: one per measure, each with its own
signature field.

Table 2 (:mod:`paraamr.diversity.scoring`), the validity study
(:mod:`paraamr.validity.measures`) and Table 6's evaluation (:mod:`paraamr.scpn.evaluate`) all score
through these objects, so a number of one name is computed one way everywhere, and the signature
field that names it comes from the object that computed it (the way sacrebleu's ``BLEU`` object
carries its own signature):

- :class:`Bleu`: ``nltk-sentence`` (the ParaAMR scripts', on the parser's tokens),
  ``sacrebleu-sentence`` and ``sacrebleu-corpus`` (13a tokenization of the raw text); scores in
  [0, 1];
- :class:`TokenIoU`: token-set intersection over union on the parser's tokens;
- :class:`TreeEdit`: TED at a cut depth and on the full trees, any preset of
  :data:`paraamr.metrics.ted.VARIANTS`;
- :class:`Similarity`: cosine of sentence embeddings (any sentence-transformers-like encoder);
- :class:`SelfBleu`: the authors' Self-BLEU among one source's paraphrases.

``field()`` is the object's part of a signature line; :func:`paraamr.metrics.signature.
metric_signature` puts the fields of Table 2 together.

>>> b = Bleu("nltk-sentence")
>>> b.field()
'nltk-sentence,w:uniform4,tok:parser,case:as-written'
>>> round(b.sentence("the cat sat on the mat", "the cat sat on the mat",
...                  "the cat sat on the mat".split(), "the cat sat on the mat".split()), 4)
1.0
>>> TokenIoU(lowercase=True).sentence(["A", "b"], ["a", "c"])
0.3333333333333333
>>> TreeEdit().field(), TreeEdit().field(full=True)
('paraamr-v2,d3:3,unit-cost,words:no,pos:yes,kernel:edist', \
'paraamr-v2,full,unit-cost,words:no,pos:yes,kernel:edist')
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from paraamr.errors import ConfigError, InputError
from paraamr.metrics.lexical import (
    BLEU_VARIANTS,
    CorpusBleu,
    bleu_nltk,
    bleu_sacrebleu_sentence,
    self_bleu,
    token_iou,
)

__all__ = ["Bleu", "TokenIoU", "TreeEdit", "Similarity", "SelfBleu", "similarity_field"]


def _case(lowercase: bool) -> str:
    return "lower" if lowercase else "as-written"


def _fold(tokens: Sequence[str], lowercase: bool) -> Sequence[str]:
    return [t.lower() for t in tokens] if lowercase else tokens


@dataclass(frozen=True)
class Bleu:
    """BLEU of a hypothesis against one reference, in [0, 1].

    Args:
        variant: one of :data:`~paraamr.metrics.lexical.BLEU_VARIANTS`.
        lowercase: lowercase tokens (``nltk-sentence``) or text (sacrebleu) first.

    >>> round(Bleu("sacrebleu-corpus").corpus(["the cat sat ."], ["the cat sat ."]), 6)
    1.0
    >>> Bleu("sacrebleu-corpus").sentence("a", "a")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: BLEU sacrebleu-corpus has no per-pair value (use corpus())
    """

    variant: str = "nltk-sentence"
    lowercase: bool = False
    key: ClassVar[str] = "bleu"

    def __post_init__(self) -> None:
        if self.variant not in BLEU_VARIANTS:
            raise ConfigError(f"metrics.bleu must be one of {BLEU_VARIANTS}, got {self.variant!r}")

    @property
    def per_pair(self) -> bool:
        """Whether each pair has a value (not for corpus BLEU)."""
        return self.variant != "sacrebleu-corpus"

    def field(self) -> str:
        """The signature value: variant, weights, tokenization, case."""
        tok = ",w:uniform4,tok:parser" if self.variant == "nltk-sentence" else ",tok:13a"
        return f"{self.variant}{tok},case:{_case(self.lowercase)}"

    def _text(self, s: str) -> str:
        return s.lower() if self.lowercase else s

    def sentence(
        self,
        hyp: str,
        ref: str,
        hyp_tokens: Sequence[str] | None = None,
        ref_tokens: Sequence[str] | None = None,
    ) -> float:
        """BLEU of ``hyp`` against ``ref``; ``nltk-sentence`` scores the parser's tokens
        (required), the sacrebleu variant the raw text.

        Raises:
            InputError: corpus BLEU (no per-pair value), or ``nltk-sentence`` without tokens.
        """
        if self.variant == "nltk-sentence":
            if hyp_tokens is None or ref_tokens is None:
                raise InputError("BLEU nltk-sentence scores the parser's tokens: pass them")
            return bleu_nltk(_fold(hyp_tokens, self.lowercase), _fold(ref_tokens, self.lowercase))
        if self.variant == "sacrebleu-sentence":
            return bleu_sacrebleu_sentence(self._text(hyp), self._text(ref))
        raise InputError(f"BLEU {self.variant} has no per-pair value (use corpus())")

    def accumulator(self) -> CorpusBleu:
        """Corpus-BLEU statistics to add pairs to (mergeable across shards)."""
        return CorpusBleu()

    def add(self, acc: CorpusBleu, hyp: str, ref: str) -> None:
        """Add one pair's raw text (case folded as the object says) to ``acc``."""
        acc.add(self._text(hyp), self._text(ref))

    def corpus(self, hyps: Sequence[str], refs: Sequence[str]) -> float:
        """sacrebleu corpus BLEU of aligned raw texts (13a, one reference each), in [0, 1]."""
        if len(hyps) != len(refs):
            raise InputError(f"corpus BLEU of {len(hyps)} hypotheses and {len(refs)} references")
        import sacrebleu

        return (
            sacrebleu.BLEU()
            .corpus_score([self._text(h) for h in hyps], [[self._text(r) for r in refs]])
            .score
            / 100.0
        )

    @staticmethod
    def sacrebleu_signature() -> str:
        """sacrebleu's own signature of :meth:`corpus` (``nrefs:1|case:mixed|...``; sacrebleu
        knows the number of references only after scoring, so one pair is scored first)."""
        import sacrebleu

        bleu = sacrebleu.BLEU()
        bleu.corpus_score(["a"], [["a"]])
        return str(bleu.get_signature())


@dataclass(frozen=True)
class TokenIoU:
    """|set(a) & set(b)| / |set(a) | set(b)| on the parser's tokens."""

    lowercase: bool = False
    key: ClassVar[str] = "iou"

    def field(self) -> str:
        return f"token-set,tok:parser,case:{_case(self.lowercase)}"

    def sentence(self, a_tokens: Sequence[str], b_tokens: Sequence[str]) -> float:
        return token_iou(_fold(a_tokens, self.lowercase), _fold(b_tokens, self.lowercase))


@dataclass(frozen=True)
class TreeEdit:
    """Tree edit distance of word-free trees: at a cut depth (TED-3) and full (TED-F).

    Args:
        variant: a preset of :data:`paraamr.metrics.ted.VARIANTS`.
        depth: the cut depth of the first number (TED-3: 3).
        kernel: ``edist`` or ``zss`` (same numbers; speed).

    >>> TreeEdit().pairs([("(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go))))")])
    [(3, 3)]
    """

    variant: str = "paraamr"
    depth: int = 3
    kernel: str = "edist"
    key: ClassVar[str] = "ted"

    def __post_init__(self) -> None:
        from paraamr.metrics.ted import VARIANTS

        if self.variant not in VARIANTS:
            raise ConfigError(
                f"ted.variant: unknown TED variant {self.variant!r}; one of {tuple(VARIANTS)}"
            )

    def field(self, full: bool = False) -> str:
        """The signature value; ``full`` names TED-F (no cut) instead of the cut depth."""
        from paraamr.metrics.ted import VARIANTS

        cut = "full" if full else f"d3:{self.depth}"
        return (
            f"{VARIANTS[self.variant].describe()},{cut},unit-cost,words:no,pos:yes,"
            f"kernel:{self.kernel}"
        )

    def pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        pool: Executor | None = None,
        workers: int = 1,
    ) -> list[tuple[float, float] | str]:
        """``(cut, full)`` TED per pair of bracket strings, or the error message of a pair
        with an unreadable tree (:func:`paraamr.metrics.ted.ted_batch`); with ``pool``, in
        parts spread over ``workers`` processes (same results, same order)."""
        from paraamr.metrics.ted import ted_batch

        args = (self.depth, self.variant, self.kernel)
        pairs = list(pairs)
        if pool is None:
            return ted_batch(pairs, *args)
        size = max(64, -(-len(pairs) // (4 * workers)))
        parts = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        futures = [pool.submit(ted_batch, p, *args) for p in parts]
        return [x for f in futures for x in f.result()]


def similarity_field(label: str) -> str:
    """The similarity field of a signature for an encoder label
    (:func:`paraamr.metrics.semantic.similarity_label`).

    >>> similarity_field("minilm,openvino")
    'cos(minilm,openvino)'
    """
    return f"cos({label})"


class Similarity:
    """Cosine similarity of sentence embeddings, each distinct sentence embedded once.

    Args:
        encoder: anything with sentence-transformers' ``encode`` (``None``: only the
            signature field, for building a signature without a model).
        name: the encoder's name in the signature (``minilm``, ``minilm,openvino``, ...).
        batch_size: sentences per encoder batch.
    """

    key: ClassVar[str] = "sim"

    def __init__(self, encoder: Any, name: str, batch_size: int = 128) -> None:
        self.encoder, self.name, self.batch_size = encoder, name, batch_size

    def field(self) -> str:
        return similarity_field(self.name)

    def pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Cosine of each (a, b) text pair (:func:`paraamr.metrics.semantic.cosine_pairs`)."""
        from paraamr.metrics.semantic import cosine_pairs

        pairs = list(pairs)
        if self.encoder is None and pairs:
            raise InputError(f"Similarity({self.name}) has no encoder to score with")
        return cosine_pairs(pairs, self.encoder, self.batch_size)


@dataclass(frozen=True)
class SelfBleu:
    """The authors' Self-BLEU among one source's paraphrases, in an order drawn from the source
    id (their script shuffles unseeded; this shuffle is the same in every run and shard).

    >>> SelfBleu().source([["a", "b", "c", "d"]], source_id=0)
    1.0
    """

    lowercase: bool = False
    num: int = 5
    key: ClassVar[str] = "selfbleu"

    def field(self) -> str:
        return (
            f"nltk-sentence,n:{self.num},pad:repeat,order:rng(source-id),"
            f"case:{_case(self.lowercase)}"
        )

    def source(self, paraphrases: Sequence[Sequence[str]], source_id: int) -> float:
        """Self-BLEU of one source's paraphrases (token lists, the parser's tokens)."""
        order = np.random.default_rng(source_id).permutation(len(paraphrases))
        toks = [_fold(paraphrases[k], self.lowercase) for k in order]
        return self_bleu(toks, self.num)
