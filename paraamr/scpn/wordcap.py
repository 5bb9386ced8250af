"""A length cap from the source: no answer holds more than ``ceil(ratio * source words + extra)``
words.

A template-infilling model given a long or deep template sometimes does not close its tree: it
fills one slot with a list that runs to the token limit ("what are the best career for a b c d e
f g h ...", a row of quotation marks). Such an output is several times longer than its source,
and one of them outweighs many good outputs in a mean tree edit distance. With
``model.word_cap=[ratio, extra]`` generation of a row stops once its answer has started word
``cap + 1`` (:class:`WordCap`), the answer is cut after its ``cap``-th word
(:func:`cut_after_words`) and read as usual (the open brackets are closed: a *repaired*
answer). Outputs shorter than the cap are untouched, so greedy decoding with a cap gives the
first ``cap`` words of the output without it.

>>> cap_for("how can i make money online ?", [1.5, 3])
14
>>> cut_after_words("(ROOT (S (NP we) (VP left at noon", 3)
'(ROOT (S (NP we) (VP left at'
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import torch

from paraamr.errors import ConfigError

__all__ = ["cap_for", "cap_name", "check_word_cap", "cut_after_words", "WordCap"]

# a label opening ``(NP`` (with whatever follows it up to a space), a closing bracket, a word
_PIECE = re.compile(r"\(\S*|\)|[^\s()]+")


def check_word_cap(cap: Sequence[float] | None) -> tuple[float, float] | None:
    """``model.word_cap`` as ``(ratio, extra)``; ``None`` stays off.

    >>> check_word_cap([1.5, 3]), check_word_cap(None)
    ((1.5, 3.0), None)

    Raises:
        ConfigError: not two numbers, or a ratio that is not positive, or a negative extra.
    """
    if cap is None:
        return None
    try:
        ratio, extra = (float(x) for x in cap)
    except (TypeError, ValueError):
        raise ConfigError(
            f"model.word_cap must be [ratio, extra] (e.g. [1.5, 3]) or null, got {cap!r}"
        ) from None
    if ratio <= 0 or extra < 0:
        raise ConfigError(f"model.word_cap needs ratio > 0 and extra >= 0, got {list(cap)}")
    return ratio, extra


def cap_name(cap: Sequence[float]) -> str:
    """The cap as signatures and table rows write it.

    >>> cap_name([1.5, 3.0]), cap_name([2, 0])
    ('1.5x+3', '2x+0')
    """
    ratio, extra = check_word_cap(cap)  # type: ignore[misc]
    return f"{ratio:g}x+{extra:g}"


def cap_for(source: str, cap: Sequence[float]) -> int:
    """The most words an answer for ``source`` may hold: ``ceil(ratio * words + extra)``, the
    source's words split on whitespace (at least 1).

    >>> cap_for("we left .", [1.0, 0]), cap_for("", [2, 0])
    (3, 1)
    """
    ratio, extra = check_word_cap(cap)  # type: ignore[misc]
    return max(1, math.ceil(ratio * len(source.split()) + extra))


def cut_after_words(text: str, n: int) -> str:
    """``text`` up to and with its ``n``-th word when more words follow; labels and brackets
    count as no word (the words of :func:`paraamr.lms.repeats.answer_words`). A text of at
    most ``n`` words is returned whole, closing brackets and all.

    >>> cut_after_words("(ROOT (NP (DT the) (NN cat)) (VP sat))", 1)
    '(ROOT (NP (DT the'
    >>> cut_after_words("(ROOT (NP we))", 1), cut_after_words("a b c", 5)
    ('(ROOT (NP we))', 'a b c')
    """
    count, end = 0, len(text)
    for m in _PIECE.finditer(text):
        piece = m.group()
        if piece.startswith("(") or piece == ")":
            continue
        count += 1
        if count == n:
            end = m.end()
        elif count > n:
            return text[:end]
    return text


class WordCap:
    """A ``StoppingCriteria``: a row is done once its answer (the columns from ``start`` on,
    decoded) has more words than its cap (the word after the cap has started).

    Args:
        tokenizer: the model's tokenizer.
        start: the first generated column (decoder-only: the prompt length; seq2seq: 1).
        caps: per input row, the most words its answer may hold (:func:`cap_for`); with beam
            search each row's beams (consecutive rows of ``input_ids``) share its cap.
    """

    def __init__(self, tokenizer: Any, start: int, caps: Sequence[int]) -> None:
        self.tokenizer, self.start, self.caps = tokenizer, start, list(caps)

    def __call__(self, input_ids: torch.Tensor, scores: Any = None, **kw: Any) -> torch.Tensor:
        from paraamr.lms.repeats import answer_words

        done = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        new = input_ids[:, self.start :]
        if new.shape[1] > 0:
            per = max(1, input_ids.shape[0] // len(self.caps))
            texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
            for row, text in enumerate(texts):
                done[row] = len(answer_words(text)) > self.caps[row // per]
        return done.to(input_ids.device)
