"""Decoding that cannot leave its input: token-level constraints for the TOP parser and
generator when every encoded label (``[in:get_weather``, ``in:get_weather]``, ``[mask]``) is one
token of the vocabulary (:func:`paraamr.training.seq2seq.add_tokens`).

- :class:`ParserConstraint` (utterance -> tree): the tree's words are exactly the utterance's
  words in order, each written with its own tokens; only brackets and labels are free. An
  intent opens at the root or inside a slot, a slot inside an intent, labels come from the
  training labels, a node closes only after it has a child and the root only after the last
  word, and then only end-of-sequence may follow.
- :class:`TemplateConstraint` (template -> tree): the template's labels and brackets are
  forced in order; each ``[mask]`` is written as one or more free tokens (any token that is
  not a label, a special token, a bracket character or white space only).

Both are replayed from the tokens generated so far (:meth:`allowed`), so they work for greedy
search, sampling and beam search alike; :class:`ConstrainedLogits` applies one per input row
as a Hugging Face ``LogitsProcessor`` (``-inf`` for every token not allowed;
:mod:`paraamr.lms.constrained`).

A word is written as the tokens of ``" " + word`` (:class:`paraamr.lms.units.UnitTokenizer`), in
training targets and prompts as in constrained decoding, so the model learns the same tokens it is
later forced to write.

>>> vocab = LabelIds(opens={"[in:a": 10, "[sl:b": 11}, closes={"in:a]": 20, "sl:b]": 21},
...                  mask=30, eos=0, free=None)
>>> c = ParserConstraint([[5], [6, 7]], vocab)     # two words: [5] and [6, 7]
>>> c.allowed([])                                  # the root must be an intent
[10]
>>> c.allowed([10])                                # the first word or a slot
[5, 11]
>>> c.allowed([10, 11, 5, 21, 6])                  # inside a word: its next token only
[7]
>>> c.allowed([10, 11, 5, 21, 6, 7])               # every word written: close the root
[20]
>>> c.allowed([10, 11, 5, 21, 6, 7, 20])
[0]
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paraamr.lms.constrained import FREE, ConstrainedLogits

__all__ = [
    "LabelIds",
    "ParserConstraint",
    "TemplateConstraint",
    "ConstrainedLogits",
    "FREE",
]

MAX_DEPTH = 8  # ParserConstraint: the most nodes open at once
MAX_SPAN = 24  # TemplateConstraint: the most tokens of one [mask] span


@dataclass(frozen=True)
class LabelIds:
    """Token ids of the encoded labels.

    Attributes:
        opens: ``"[in:get_weather"`` -> id (``in:`` intents and ``sl:`` slots).
        closes: ``"in:get_weather]"`` -> id.
        mask: the ``[mask]`` token id.
        eos: the end-of-sequence id.
        free: a boolean tensor over the vocabulary, the tokens a ``[mask]`` span may use
            (``None`` where only the parser constraint is needed).
    """

    opens: dict[str, int]
    closes: dict[str, int]
    mask: int
    eos: int
    free: Any = None

    def close_of(self, open_id: int) -> int:
        """The closing id of an opening id (``[in:a`` -> ``in:a]``)."""
        return self._close_by_open[open_id]

    @functools.cached_property
    def _close_by_open(self) -> dict[int, int]:
        return {i: self.closes[o[1:] + "]"] for o, i in self.opens.items()}

    def is_intent(self, open_id: int) -> bool:
        return self._open_names[open_id].startswith("[in:")

    @functools.cached_property
    def _open_names(self) -> dict[int, str]:
        return {i: o for o, i in self.opens.items()}

    @property
    def label_ids(self) -> set[int]:
        return {*self.opens.values(), *self.closes.values(), self.mask}

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, tokens: Sequence[str]) -> LabelIds:
        """The ids of the label ``tokens`` (:func:`paraamr.top.module.label_tokens`) in
        ``tokenizer``; each must be one token. ``free`` excludes labels, special tokens,
        tokens whose text holds ``[`` or ``]`` and tokens that decode to white space only
        (a ``[mask]`` span is then never empty).

        Raises:
            ValueError: a label is not a single token of the vocabulary.
        """
        import torch

        vocab = tokenizer.get_vocab()
        missing = [t for t in tokens if t not in vocab]
        if missing:
            raise ValueError(
                f"constrained decoding needs every label as one token; {missing[:3]} are not "
                "(set model.add_label_tokens=true)"
            )
        opens = {t: vocab[t] for t in tokens if t.startswith("[") and t != "[mask]"}
        closes = {t: vocab[t] for t in tokens if t.endswith("]") and not t.startswith("[")}
        size = max(len(tokenizer), max(vocab.values()) + 1)
        free = torch.ones(size, dtype=torch.bool)
        for i in vocab.values():
            text = tokenizer.decode([i])
            if "[" in text or "]" in text or not text.strip():
                free[i] = False
        for i in tokenizer.all_special_ids:
            free[i] = False
        for i in (*opens.values(), *closes.values(), vocab["[mask]"]):
            free[i] = False
        return cls(opens, closes, vocab["[mask]"], int(tokenizer.eos_token_id), free)


class ParserConstraint:
    """The parser's constraint for one utterance (see the module docstring).

    Args:
        words: the token ids of each utterance word, in order
            (:meth:`paraamr.lms.units.UnitTokenizer.unit`).
        ids: the label ids.
        max_depth: the most nodes open at once (TOP trees are shallow: a guard against an
            untrained model opening labels without end).
    """

    def __init__(
        self, words: Sequence[Sequence[int]], ids: LabelIds, max_depth: int = MAX_DEPTH
    ) -> None:
        self.words = [list(w) for w in words if w]
        self.max_depth = max_depth
        self.ids = ids
        self._opens = set(ids.opens.values())
        self._intents = sorted(i for i in ids.opens.values() if ids.is_intent(i))
        self._slots = sorted(i for i in ids.opens.values() if not ids.is_intent(i))

    def allowed(self, generated: Sequence[int]) -> list[int]:
        """The ids that may follow ``generated`` (empty: a dead end, only ``eos`` is left)."""
        ids, words = self.ids, self.words
        i = j = 0  # next word, next token inside it
        stack: list[list] = []  # [open id, has a child]
        done = False
        for t in generated:
            t = int(t)
            if done:
                return [ids.eos]
            if j:
                j += 1
                if j == len(words[i]):
                    i, j = i + 1, 0
            elif t in self._opens:
                if stack:
                    stack[-1][1] = True
                stack.append([t, False])
            elif stack and t == ids.close_of(stack[-1][0]):
                stack.pop()
                done = not stack
            elif i < len(words) and t == words[i][0]:
                stack[-1][1] = True
                j = 1
                if j == len(words[i]):
                    i, j = i + 1, 0
            else:  # a token the constraint never allows (e.g. forced by a caller)
                return [ids.eos]
        if done:
            return [ids.eos]
        if j:
            return [words[i][j]]
        if not stack:
            return list(self._intents) if words else [ids.eos]
        out: list[int] = []
        if i < len(words):
            out.append(words[i][0])
            if len(stack) < self.max_depth:
                out += self._intents if not ids.is_intent(stack[-1][0]) else self._slots
        if stack[-1][1] and (len(stack) > 1 or i == len(words)):
            out.append(ids.close_of(stack[-1][0]))
        return sorted(set(out)) or [ids.eos]


class TemplateConstraint:
    """The generator's constraint for one template: its label tokens forced, each ``[mask]``
    one or more free tokens.

    Args:
        template: the template's ids (:class:`paraamr.lms.units.UnitTokenizer` of the
            encoded template).
        ids: the label ids (``free`` set).
        max_span: the most tokens of one ``[mask]`` span; then the next label is forced (a
            guard against a span without end).

    >>> ids = LabelIds({"[in:a": 10}, {"in:a]": 20}, mask=30, eos=0, free=None)
    >>> c = TemplateConstraint([10, 30, 20], ids)
    >>> c.allowed([]), c.allowed([10]), c.allowed([10, 7]), c.allowed([10, 7, 20])
    ([10], 'free', ('free', 20), [0])
    >>> TemplateConstraint([10, 30, 20], ids, max_span=2).allowed([10, 7, 8])
    [20]
    """

    def __init__(self, template: Sequence[int], ids: LabelIds, max_span: int = MAX_SPAN) -> None:
        self.units = [int(t) for t in template]
        self.ids = ids
        self.max_span = max_span

    def allowed(self, generated: Sequence[int]) -> list[int] | str | tuple[str, int]:
        """The ids that may follow: a list, :data:`FREE`, or ``(FREE, id)`` (free tokens or
        the next forced label)."""
        p, span = 0, 0  # next template unit, free tokens written for the current [mask]
        units, mask = self.units, self.ids.mask
        for t in generated:
            if p >= len(units):
                return [self.ids.eos]
            if units[p] == mask:
                nxt = units[p + 1] if p + 1 < len(units) else None
                if span and int(t) == nxt:
                    p, span = p + 2, 0
                else:
                    span += 1
            else:
                p += 1
        if p >= len(units):
            return [self.ids.eos]
        if units[p] != mask:
            return [units[p]]
        nxt = units[p + 1] if p + 1 < len(units) else self.ids.eos
        if not span:
            return FREE
        return [nxt] if span >= self.max_span else (FREE, nxt)
