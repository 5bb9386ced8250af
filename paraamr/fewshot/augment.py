"""Paraphrase augmentation of a few-shot training set (the paper's §5.3) and the repeat baseline.

Each training example's sentence(s) are paraphrased under each of the three templates
(:data:`TEMPLATES`; the paraphraser expands a template to a full target parse); the label is
kept. Which sentence of a pair is paraphrased is a setting (``first``, ``second`` or ``both``;
a single-sentence example always uses ``first``). A candidate is dropped, and the reason
counted, when a paraphrased side is missing (the paraphraser skipped it), equal to its input
(case and spacing folded), or above the perplexity threshold (the paper: 110, through
:func:`paraamr.corpus.filters.passes_perplexity`). With no perplexity model the filter is not
applied and the result says so (``perplexity_filter``), it never silently passes. A kept
paraphrase that differs from its input in at most a tenth of the input's words is counted as a
*near-copy* (:func:`is_near_copy`; ``kept_near_copy`` in the counts, ``near_copy`` per record):
it is kept, as the paper keeps it, but it adds little new text.

The paraphraser is anything with the :class:`Paraphraser` interface: the syntax-controlled
paraphraser of the Table 6 work (:class:`SCPNParaphraser`, loaded lazily from
``paraamr.scpn.paraphrase``), or, in tests only, the rule-based stand-in of
``tests/testkit/paraphrasers.py``.

>>> from paraamr.fewshot.data import Example
>>> class Reverse:  # a toy paraphraser: reverses the words, but copies under template 2
...     def paraphrase(self, sentences, templates):
...         return [[s.upper() if j == 1 else " ".join(s.split()[::-1])
...                  for j, _ in enumerate(templates)] for s in sentences]
>>> res = augment([Example("a cat", None, 1, "t#0")], Reverse(), max_perplexity=None)
>>> [(e.text_a, e.label) for e in res.examples]
[('a cat', 1), ('cat a', 1), ('cat a', 1)]
>>> dict(res.stats)
{'candidates': 3, 'kept': 2, 'kept_near_copy': 0, 'dropped_identical': 1}
>>> [e.uid for e in repeat_examples([Example("a", None, 0, "t#0")], copies=2)]
['t#0', 't#0+rep1', 't#0+rep2']
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from paraamr.corpus.filters import passes_perplexity
from paraamr.errors import ConfigError, ParaAMRError
from paraamr.fewshot.data import Example
from paraamr.metrics.lexical import token_edit_distance

__all__ = [
    "TEMPLATES",
    "Paraphraser",
    "SCPNParaphraser",
    "AugmentResult",
    "augment",
    "is_near_copy",
    "repeat_examples",
]

log = logging.getLogger(__name__)

TEMPLATES: tuple[str, ...] = (
    "(ROOT (S (NP) (VP) (.)))",
    "(ROOT (S (VP) (.)))",
    "(ROOT (NP (NP) (.)))",
)
SIDES = ("first", "second", "both")


@runtime_checkable
class Paraphraser(Protocol):
    """What augmentation needs: one list of outputs per sentence, one output per template
    (``None`` where the paraphraser skipped that input)."""

    def paraphrase(self, sentences: list[str], templates: list[str]) -> list[list[str | None]]:
        """Paraphrase every sentence under every template."""
        ...


class SCPNParaphraser:
    """The syntax-controlled paraphraser of ``paraamr.scpn`` (Table 6) behind the
    :class:`Paraphraser` interface; the model loads on first use.

    Args:
        model: a trained SCPN model directory (training's ``best_model``; the CLI's
            ``--model DIR``).
        parse_generator: ``retrieval`` (the model dir's parse index) or a parse-generator
            model directory (template -> full target parse).
        batch_size: sentences per generation batch.
        num_beams: beam size (``None``: the model's; the paper 4).
        device: torch device (``None``: the default).
        no_fit: a template no training parse fits: ``nearest`` (default: the parse of the
            nearest template, counted, so every example gets one candidate per template as with
            the paper's trained parse generator; see :mod:`paraamr.scpn.parse_generator`) or
            ``skip`` (that candidate has no output).
    """

    def __init__(
        self,
        model: str | os.PathLike,
        parse_generator: str = "retrieval",
        batch_size: int = 16,
        num_beams: int | None = None,
        device: str | None = None,
        no_fit: str = "nearest",
    ) -> None:
        if not model:
            raise ConfigError("augment.paraphraser.model: the SCPN model directory is required")
        self.model, self.parse_generator = str(model), parse_generator
        self.batch_size, self.num_beams, self.device = batch_size, num_beams, device
        self.no_fit = no_fit
        self._impl: Any = None

    def signature(self) -> str:
        nofit = "" if self.no_fit == "skip" else f",no_fit={self.no_fit}"
        return (
            f"scpn({self.model},pg={self.parse_generator}{nofit},beam={self.num_beams or 'model'})"
        )

    def _load(self) -> Any:
        if self._impl is None:
            from paraamr.scpn.paraphrase import Paraphraser  # Table 6's paraphraser

            self._impl = Paraphraser.load(
                self.model,
                self.parse_generator,
                batch_size=self.batch_size,
                num_beams=self.num_beams,
                device=self.device,
                no_fit=self.no_fit,
            )
        return self._impl

    @property
    def counts(self) -> dict[str, int]:
        """The paraphraser's counts so far (``nearest_template``, ``skipped:<reason>``, ...)."""
        return dict(self._impl.counts) if self._impl is not None else {}

    def paraphrase(self, sentences: list[str], templates: list[str]) -> list[list[str | None]]:
        rows = self._load().paraphrase(list(sentences), list(templates))
        out: list[list[str | None]] = [[None] * len(templates) for _ in sentences]
        for r in rows:  # sentence-major rows with an "index" (sentence * len(templates) + j)
            i, j = divmod(int(r["index"]), len(templates))
            out[i][j] = r.get("output")
        return out


def _fold(s: str) -> str:
    """The comparison key of "a paraphrase equal to its input": case and all whitespace dropped,
    so a re-spacing of the same tokens (``"Berkeley , Calif."`` vs ``"Berkeley, Calif."``, what a
    copying generator's detokenizer writes) is no new text either.

    >>> _fold("Berkeley , California-based Xoma") == _fold("berkeley, California-based  Xoma")
    True
    """
    return "".join(s.lower().split())


_WORD = re.compile(r"\w+(?:'\w+)*|[^\w\s]")
_CLITIC = re.compile(r"\s+(?=n't\b|'(?:s|re|ve|ll|d|m)\b)")  # "do n't" -> "don't"


def _words(text: str) -> list[str]:
    """Case-folded words; a punctuation mark is a word; a clitic split off by a tokenizer
    (``do n't``, ``Xoma 's``) is joined back to its word.

    >>> _words("He said , Xoma 's unit do n't")
    ['he', 'said', ',', "xoma's", 'unit', "don't"]
    """
    return _WORD.findall(_CLITIC.sub("", text.lower()))


def word_edits(output: str, source: str) -> int:
    """Word-level Levenshtein distance (:func:`paraamr.metrics.lexical.token_edit_distance`)
    between the words of ``output`` and ``source`` (:func:`_words`), so re-spacing a tokenized
    sentence costs nothing.

    >>> word_edits("He said , Xoma 's unit do n't", "he said, xoma's unit don't")
    0
    >>> word_edits("the cat sat", "a cat sat down")
    2
    """
    return token_edit_distance(_words(output), _words(source))


def is_near_copy(output: str, source: str, max_share: float = 0.1) -> bool:
    """True when ``output`` is within ``max_share`` of the source's word count of word edits
    (:func:`word_edits`) from ``source``: at most 1 edit for a 10-word source, 2 for a 20-word
    one. Identity counts as a near-copy.

    >>> is_near_copy("the cat sat on the mat today .", "the cat sat on the mat .")  # 1 of 7
    False
    >>> is_near_copy("the cat sat on the big mat , he said .", "the cat sat on the mat , he said .")
    True
    """
    n = len(_words(source))
    return word_edits(output, source) <= max_share * n


@dataclass
class AugmentResult:
    """The training set (originals first, then the kept paraphrases), one record per candidate
    (``kept`` and ``reason``), counts, and how the perplexity filter was applied."""

    examples: list[Example]
    records: list[dict] = field(default_factory=list)
    stats: Counter = field(default_factory=Counter)
    perplexity_filter: str = "off"


def augment(
    examples: Sequence[Example],
    paraphraser: Paraphraser,
    *,
    templates: Sequence[str] = TEMPLATES,
    sentences: str = "first",
    max_perplexity: float | None = 110.0,
    scorer: Any = None,
    near_copy_share: float | None = 0.1,
) -> AugmentResult:
    """Add up to one paraphrase per (example, template), label kept.

    Args:
        examples: the few-shot training examples.
        paraphraser: a :class:`Paraphraser`.
        templates: target templates (the paper's three by default).
        sentences: which sentence of a pair is paraphrased: ``first``, ``second`` or ``both``
            (``both``: each under the same template; a candidate is kept only when every
            paraphrased side passes).
        max_perplexity: drop paraphrases above this perplexity (``None``: no filter).
        scorer: an object with ``perplexities(list[str]) -> list[float]`` (e.g.
            :class:`paraamr.lms.CausalLMScorer`); ``None`` with a threshold: the
            filter is not applied, and ``perplexity_filter`` says so.
        near_copy_share: a kept paraphrase within this share of its input's words of word
            edits is counted as a near-copy (:func:`is_near_copy`; counted, not dropped); with
            ``sentences="both"`` a candidate is a near-copy only when both sides are. ``None``:
            not counted (no ``kept_near_copy`` count, ``near_copy`` is ``None``).
    """
    if sentences not in SIDES:
        raise ConfigError(f"augment.sentences: {sentences!r} is not one of {list(SIDES)}")
    templates = list(templates)
    sides_of = []
    for e in examples:
        sides = (
            ["a"]
            if e.text_b is None
            else {"first": ["a"], "second": ["b"], "both": ["a", "b"]}[sentences]
        )
        sides_of.append(sides)
    todo = sorted(
        {getattr(e, f"text_{s}") for e, ss in zip(examples, sides_of, strict=True) for s in ss}
    )
    outs = paraphraser.paraphrase(todo, templates) if todo else []
    if len(outs) != len(todo) or any(len(o) != len(templates) for o in outs):
        raise ParaAMRError("the paraphraser must return one output per sentence and template")
    para = dict(zip(todo, outs, strict=True))
    ppl: dict[str, float] = {}
    if max_perplexity is None:
        filt = "off"
    elif scorer is None:
        filt = f"not applied (<= {max_perplexity} requested, no perplexity model)"
    else:
        texts = sorted({o for o in (x for os_ in outs for x in os_) if o})
        ppl = dict(zip(texts, scorer.perplexities(texts), strict=True)) if texts else {}
        name = scorer.signature() if hasattr(scorer, "signature") else type(scorer).__name__
        filt = f"<= {max_perplexity} ({name})"
    stats: Counter = Counter(candidates=0, kept=0)
    if near_copy_share is not None:
        stats["kept_near_copy"] = 0  # present (0) even when nothing is kept
    records, added = [], []
    for e, sides in zip(examples, sides_of, strict=True):
        for j, t in enumerate(templates):
            stats["candidates"] += 1
            new = {"a": e.text_a, "b": e.text_b}
            reason = None
            near = True
            for s in sides:
                src = getattr(e, f"text_{s}")
                out = para[src][j]
                if out is None or not str(out).strip():
                    reason = reason or "dropped_no_output"
                elif _fold(out) == _fold(src):
                    reason = reason or "dropped_identical"
                elif filt.startswith("<=") and not passes_perplexity(ppl.get(out), max_perplexity):
                    reason = reason or (
                        "dropped_perplexity" if out in ppl else "dropped_no_perplexity"
                    )
                if out and near_copy_share is not None:
                    near = near and is_near_copy(out, src, near_copy_share)
                new[s] = out
            rec = {
                "uid": e.uid,
                "template": t,
                "sides": "".join(sides),
                "text_a": new["a"],
                "text_b": new["b"],
                "label": e.label,
                "perplexity": {s: ppl.get(new[s]) for s in sides} if ppl else None,
                "kept": reason is None,
                "reason": reason,
                "near_copy": (reason is None and near) if near_copy_share is not None else None,
            }
            records.append(rec)
            if reason is None:
                stats["kept"] += 1
                if near_copy_share is not None:
                    stats["kept_near_copy"] += int(near)
                added.append(Example(new["a"], new["b"], e.label, f"{e.uid}+para{j + 1}"))
            else:
                stats[reason] += 1
    if max_perplexity is not None and scorer is None:
        stats["perplexity_filter_not_applied"] = stats["kept"]
    log.info("augmentation: %s; perplexity filter %s", dict(stats), filt)
    return AugmentResult(list(examples) + added, records, stats, filt)


def repeat_examples(examples: Sequence[Example], copies: int = 3) -> list[Example]:
    """The baseline with the augmented set's size and no new text: each example, then
    ``copies`` copies of each (as many as three kept paraphrases would add)."""
    extra = [
        Example(e.text_a, e.text_b, e.label, f"{e.uid}+rep{c}")
        for e in examples
        for c in range(1, copies + 1)
    ]
    return list(examples) + extra
