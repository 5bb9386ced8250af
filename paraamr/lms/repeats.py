"""Decoding that does not repeat itself: no word n-gram twice in one answer.

A template-infilling model given a long template fills surplus slots by copying a phrase it has
already written ("PCCW's chief operating officer, Mike Butcher, ..., PCCW's chief operating
officer, Mike Butcher, ..."). Hugging Face's ``no_repeat_ngram_size`` cannot stop it: it counts
*tokens*, so it would also forbid the brackets and labels every tree repeats, and for a
decoder-only model the prompt's n-grams too (copying the source is the point). This blocks
repeated n-grams of the answer's **words** only (labels and brackets left out): once the last
``n - 1`` words of a row have occurred before, the word that followed them there may not start
next (:class:`RepeatedWordBlocker`, ``model.no_repeat_words=n``).

>>> answer_words("(ROOT (S (NP the cat) (VP sat (PP on") [:5]
['the', 'cat', 'sat', 'on']
>>> sorted(banned_next_words(["the", "cat", "sat", "and", "the", "cat"], 3))
['sat']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch

from paraamr.errors import ConfigError

__all__ = ["answer_words", "banned_next_words", "RepeatedWordBlocker"]

_LABEL = re.compile(r"\(\S*")


def answer_words(text: str) -> list[str]:
    """The words of a (partial) answer: a tree with words in its leaves loses its ``(LABEL``
    openings and ``)`` closings; plain text is split on whitespace.

    >>> answer_words("(ROOT (SQ (VBZ is) (NP it)) (. ?)))")
    ['is', 'it', '?']
    >>> answer_words("how can i make money")
    ['how', 'can', 'i', 'make', 'money']
    """
    return _LABEL.sub(" ", text).replace(")", " ").split()


def banned_next_words(words: Sequence[str], n: int) -> set[str]:
    """The words that would complete an n-gram already in ``words`` (``n >= 2``): the followers
    of every earlier occurrence of the last ``n - 1`` words.

    >>> sorted(banned_next_words("a b c a b d a b".split(), 3))
    ['c', 'd']
    >>> banned_next_words("a b c".split(), 3)
    set()
    """
    k = n - 1
    if len(words) < k or k < 1:
        return set()
    tail = tuple(words[-k:])
    return {words[i + k] for i in range(len(words) - k) if tuple(words[i : i + k]) == tail}


class RepeatedWordBlocker:
    """A ``LogitsProcessor``: no row writes a word n-gram of its answer twice.

    At each step every row's answer so far (the columns from ``start`` on, decoded) is read as
    words (:func:`answer_words`); the words that would repeat an n-gram
    (:func:`banned_next_words`) get ``-inf`` on the first token of their space-prefixed
    spelling, the form a word takes after a label or another word. The last word may still be
    being spelled; a ban then only applies once it is complete, since a new word starts with
    a space-prefixed token.

    Args:
        tokenizer: the model's tokenizer.
        start: the first generated column (decoder-only: the prompt length; seq2seq: 1).
        n: the n-gram size in words (``>= 2``).
    """

    def __init__(self, tokenizer: Any, start: int, n: int) -> None:
        if n < 2:
            raise ConfigError(f"model.no_repeat_words must be at least 2, got {n}")
        self.tokenizer, self.start, self.n = tokenizer, start, n
        self._first_id: dict[str, int | None] = {}
        self.bans = 0  # (row, step) bans applied: a measure of how often it acted

    def first_id(self, word: str) -> int | None:
        """The first token of `` word`` (cached)."""
        if word not in self._first_id:
            ids = self.tokenizer(" " + word, add_special_tokens=False)["input_ids"]
            self._first_id[word] = ids[0] if ids else None
        return self._first_id[word]

    def banned_ids(self, text: str) -> set[int]:
        """The tokens banned after the answer ``text``."""
        ids = {self.first_id(w) for w in banned_next_words(answer_words(text), self.n)}
        ids.discard(None)
        return ids  # type: ignore[return-value]

    def first_ban(self, answer: Sequence[int]) -> int | None:
        """The first position of ``answer`` (a row's generated ids, decoded without the
        rule) whose token the rule bans after the ids before it; ``None`` if none is. Where
        none is, greedy decoding under the rule writes the same answer (it only ever removes
        tokens that were not chosen), so only the other answers need decoding again.

        """
        for t in range(1, len(answer)):
            text = self.tokenizer.decode(list(answer[:t]), skip_special_tokens=True)
            if int(answer[t]) in self.banned_ids(text):
                return t
        return None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        new = input_ids[:, self.start :]
        if new.shape[1] == 0:
            return scores
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        for row, text in enumerate(texts):
            ids = self.banned_ids(text)
            if ids:
                scores[row, sorted(ids)] = float("-inf")
                self.bans += 1
        return scores
