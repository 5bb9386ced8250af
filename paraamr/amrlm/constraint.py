"""Parser decoding that can only write a balanced graph, whatever the model prefers.

A serialized graph (:func:`paraamr.amr.serialize.serialize`) is ``( concept :role value … )``
with values that are constants or nested ``( … )``. :class:`BalancedGraph` is a per-row
constraint of :class:`paraamr.lms.constrained.ConstrainedLogits`: from the brackets in the
text of each vocabulary token (:class:`BracketTable`, read once per tokenizer) it keeps the
open-bracket depth of what a row has written and allows

- first, only tokens whose text starts with ``(`` (after spaces);
- then any token that keeps the graph open all through its text (never closes more brackets
  than are open) and does not open deeper than ``max_depth``, or one that closes the graph
  with its last bracket (``)``, `` )``, ``))`` at depth 2; not ``) (``, which would start a
  second graph); the end-of-sequence token only at depth 0;
- once the depth is 0 again, only the end-of-sequence token (one graph per answer);
- when the tokens left before ``max_new_tokens`` are only enough to close what is open, only
  the close-bracket token, so an answer cut by the length limit is still balanced;
- with ``stop_loops=r``: once the answer ends in ``r`` copies in a row of one block of tokens
  that holds a word (``:ARG1 ( sound-01 :ARG1 ( sound-01 :ARG1 ( sound-01``,
  :func:`repeated_tail`), only the close-bracket token: a looping answer is closed where
  the loop shows instead of running on to the token limit (and holding up its batch).

A balanced answer can still be one amrlib's tolerant deserializer rejects (a role with no
value, say): the parser counts those as rejects, stage ``parse``.

Examples:
    >>> table = BracketTable.from_texts(["(", ")", " x", "))", "(a", "<eos>"], eos=5, close=1)
    >>> c = BalancedGraph(table, max_new_tokens=6, max_depth=3)
    >>> c.mask([]).tolist()        # only an opening token first
    [True, False, False, False, True, False]
    >>> c.mask([0, 2]).tolist()    # depth 1: no '))', no end yet
    [True, True, True, False, True, False]
    >>> BalancedGraph(table, 20, 3).mask([0, 0, 2]).tolist()  # depth 2: '))' may close it
    [True, True, True, True, True, False]
    >>> c.mask([0, 2, 1]).tolist() # closed: only the end
    [False, False, False, False, False, True]
    >>> c.mask([0, 0, 0]).tolist() # depth 3 with 3 tokens left: close only
    [False, True, False, False, False, False]
    >>> loops = BalancedGraph(table, max_new_tokens=20, stop_loops=2)
    >>> loops.mask([0, 4, 4]).tolist()     # '(a' twice: the loop is closed
    [False, True, False, False, False, False]
    >>> loops.mask([0, 4, 4, 1]).tolist()  # and stays closing
    [False, True, False, False, False, False]
    >>> loops.mask([0, 0, 0]).tolist()     # '(' three times holds no word: free
    [True, True, True, True, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["BracketTable", "BalancedGraph", "repeated_tail"]


@dataclass(frozen=True)
class BracketTable:
    """Per token id: ``delta`` (opens - closes), ``low`` (the lowest running depth inside its
    text, <= 0), ``peak`` (the highest), ``opens_first`` (its first non-space character is
    ``(``), ``word`` (it holds a character other than brackets and spaces); plus the ids of
    the end-of-sequence and of a lone ``)``."""

    delta: torch.Tensor
    low: torch.Tensor
    peak: torch.Tensor
    opens_first: torch.Tensor
    word: torch.Tensor
    eos: int
    close: int
    #: its text ends in a ``)`` (spaces after it aside) at its lowest depth: it may close the graph
    closes_last: torch.Tensor | None = None

    @classmethod
    def from_texts(cls, texts: Sequence[str], eos: int, close: int) -> BracketTable:
        delta, low, peak, first, word, last = [], [], [], [], [], []
        for text in texts:
            d = lo = hi = 0
            for ch in text:
                if ch == "(":
                    d += 1
                elif ch == ")":
                    d -= 1
                lo, hi = min(lo, d), max(hi, d)
            delta.append(d)
            low.append(lo)
            peak.append(hi)
            first.append(text.lstrip().startswith("("))
            word.append(bool(text.replace("(", "").replace(")", "").strip()))
            last.append(text.rstrip().endswith(")") and lo == d)
        return cls(torch.tensor(delta), torch.tensor(low), torch.tensor(peak),
                   torch.tensor(first), torch.tensor(word), eos, close,
                   torch.tensor(last))  # fmt: skip

    @classmethod
    def from_tokenizer(cls, tokenizer: Any) -> BracketTable:
        """The table of a Hugging Face tokenizer (each id decoded on its own)."""
        texts = [tokenizer.decode([i]) for i in range(len(tokenizer))]
        close = tokenizer(")", add_special_tokens=False)["input_ids"]
        if len(close) != 1:
            raise ValueError(f"')' is not one token of this tokenizer: {close}")
        return cls.from_texts(texts, eos=int(tokenizer.eos_token_id), close=close[0])


def repeated_tail(ids: Sequence[int], repeats: int, is_word: Sequence[bool],
                  max_period: int = 32) -> int:  # fmt: skip
    """The length of the shortest block that ``ids`` end with ``repeats`` times in a row,
    among blocks that hold at least one token with ``is_word[token]``; 0 if none does.

    >>> words = [False, True, True]           # token 0 is a bracket, 1 and 2 are words
    >>> repeated_tail([1, 0, 2, 0, 2], 2, words)
    2
    >>> repeated_tail([0, 0, 0, 0], 2, words)  # brackets only
    0
    >>> repeated_tail([1, 0, 2, 0, 2], 3, words)
    0
    """
    n = len(ids)
    for p in range(1, min(max_period, n // repeats) + 1):
        block = ids[n - p :]
        if not any(is_word[t] for t in block):
            continue
        if all(ids[n - (k + 1) * p : n - k * p] == block for k in range(1, repeats)):
            return p
    return 0


class BalancedGraph:
    """The constraint of one answer (see the module docstring)."""

    def __init__(self, table: BracketTable, max_new_tokens: int, max_depth: int = 40,
                 stop_loops: int | None = None) -> None:  # fmt: skip
        self.table, self.max_new_tokens, self.max_depth = table, max_new_tokens, max_depth
        self.stop_loops = stop_loops
        self._is_word = table.word.tolist() if stop_loops else []
        n = table.delta.numel()
        self._only_eos = torch.zeros(n, dtype=torch.bool)
        self._only_eos[table.eos] = True
        self._only_close = torch.zeros(n, dtype=torch.bool)
        self._only_close[table.close] = True

    def allowed(self, generated: Sequence[int]) -> tuple[torch.Tensor, list[int]]:
        """:class:`~paraamr.lms.constrained.ConstrainedLogits`'s form of :meth:`mask`."""
        return self.mask(generated), []

    def mask(self, generated: Sequence[int]) -> torch.Tensor:
        """A boolean vocabulary mask of the tokens that may follow ``generated``."""
        t = self.table
        if not generated:
            return t.opens_first.clone()
        depth = int(t.delta[list(generated)].sum())
        if depth <= 0:
            return self._only_eos.clone()
        left = self.max_new_tokens - len(generated)
        if left - 1 <= depth or self.looped(generated):  # the closes must start now
            return self._only_close.clone()
        after = depth + t.delta
        # the graph stays open all through the token, or the token closes it last (" )")
        ok = t.low > -depth
        if t.closes_last is not None:
            ok |= (after == 0) & t.closes_last
        mask = ok & (depth + t.peak <= self.max_depth)
        mask &= after <= left - 1  # what opens must still fit its closes
        mask[t.close] = True
        mask[t.eos] = False
        return mask

    def looped(self, generated: Sequence[int]) -> bool:
        """With ``stop_loops``: whether ``generated``, less the closes forced after a loop,
        ends in a loop (so the closing goes on until the graph is closed)."""
        if not self.stop_loops:
            return False
        ids = list(generated)
        while ids and ids[-1] == self.table.close:
            ids.pop()
        return repeated_tail(ids, self.stop_loops, self._is_word) > 0
