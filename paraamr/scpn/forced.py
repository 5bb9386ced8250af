"""Template-forced decoding for template infilling: the answer keeps the template's brackets and
labels exactly, and the model writes only the words of its leaves.

A template ``(ROOT (S (NP) (VP) (.)))`` allows exactly the answers
``(ROOT (S (NP w ...) (VP w ...) (. w ...)))``: fixed *pieces* of text (``" (ROOT (S (NP"``,
``") (VP"``, ``") (."``, ``")))"``) with one *slot* of one or more words between two pieces.
:class:`AnswerPattern` holds the pieces; :class:`TemplateForcing` replays the text generated so
far against them and says which tokens may follow. It works on characters, not token ids, so
labels and brackets may be split into tokens in any way (SmolLM2 writes ``SBARQ`` as ``SB AR
Q``, and ``?)))`` as one token after the word ``?``): in a piece, a token must be a prefix of
the piece's rest; in a slot, any token without a bracket, or one whose part before its first
bracket is still words and whose bracket part starts the next piece. After the last piece only
end-of-sequence may follow. A slot ends by force after :data:`MAX_SLOT_WORDS` words (or 8 times
as many characters: a guard against a slot without end).

With a word budget (``max_words``, the row's length cap from :mod:`paraamr.scpn.wordcap`) the
answer stays whole: once the words written so far and one word for each slot still empty reach
the budget, the current slot ends after the word it is writing, and every later slot holds one
word. A template with more slots than the budget gets one word per slot.

Applied per row as a Hugging Face ``LogitsProcessor`` (:class:`paraamr.lms.constrained.
ConstrainedLogits`), so greedy search, sampling and beams all stay inside the template. The
prompt is unchanged: a model trained for template infilling is decoded with
``model.force_template=true`` (``paraamr paraphrase --force-template``) without retraining.

>>> AnswerPattern.from_template("(ROOT (S (NP) (VP) (.)))").pieces
(' (ROOT (S (NP', ') (VP', ') (.', ')))')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paraamr.errors import TreeError

__all__ = ["AnswerPattern", "TokenTable", "TemplateForcing", "MAX_SLOT_WORDS", "forcings"]

MAX_SLOT_WORDS = 32  # a slot of this many words (or 8x as many characters) must end
_LEAF = re.compile(r"\(([^\s()]+)\)")
_WORD = re.compile(r"(?<=[\s)])[^\s()]+")  # a token not right after "(" is a word
_BRACKETS = "()"


@dataclass(frozen=True)
class AnswerPattern:
    """The fixed text of a template's answers: ``len(pieces) - 1`` slots, one between each two
    pieces (the answer starts with a space, as the training answers do)."""

    pieces: tuple[str, ...]

    @property
    def slots(self) -> int:
        """How many word slots the answers have (one per leaf of the template).

        >>> AnswerPattern.from_template("(ROOT (S (NP) (VP) (.)))").slots
        3
        """
        return len(self.pieces) - 1

    @classmethod
    def from_template(cls, template: str) -> AnswerPattern:
        """The pattern of a word-free template (each leaf ``(X)`` becomes a slot).

        >>> AnswerPattern.from_template("(ROOT (SBARQ (WHADVP (WRB)) (SQ (MD))))").pieces
        (' (ROOT (SBARQ (WHADVP (WRB', ')) (SQ (MD', '))))')

        Raises:
            TreeError: not one well-formed, word-free tree.
        """
        from paraamr.scpn.formats import read_tree
        from paraamr.scpn.infill import normalise_template

        read_tree(template)  # raises on a malformed template
        text = normalise_template(template)
        if _WORD.search(text):
            raise TreeError(f"a template is word-free, this one holds words: {template[:80]!r}")
        pieces = tuple(_LEAF.sub("(\\1\x00)", text).split("\x00"))
        if len(pieces) < 2:
            raise TreeError(f"a template needs at least one leaf: {template[:80]!r}")
        return cls((" " + pieces[0], *pieces[1:]))


class TokenTable:
    """What decoding needs to know about a tokenizer's vocabulary, computed once.

    Attributes:
        tokenizer: the tokenizer.
        strings: the text of each id (``tokenizer.decode([id])``).
        by_string: text -> ids with that text (special tokens left out).
        word: boolean mask of tokens that may stand inside a slot (no bracket, no line break,
            not special).
        word_start: those that may begin a slot: a space, then a character that is not one,
            or a lone space.
        word_after_space: those that may follow a slot's lone space (no leading white space).
        bracketed: ``(id, words part, bracket part)`` of every non-special token with a bracket.
        eos: the end-of-sequence id.
    """

    def __init__(self, tokenizer: Any) -> None:
        import torch

        vocab = len(tokenizer)
        special = set(tokenizer.all_special_ids)
        self.tokenizer = tokenizer
        self.strings = [tokenizer.decode([i]) for i in range(vocab)]
        self.eos = tokenizer.eos_token_id
        self.by_string: dict[str, list[int]] = {}
        self.bracketed: list[tuple[int, str, str]] = []
        word = torch.zeros(vocab, dtype=torch.bool)
        start = torch.zeros(vocab, dtype=torch.bool)
        after_space = torch.zeros(vocab, dtype=torch.bool)
        for i, s in enumerate(self.strings):
            if i in special or not s:
                continue
            self.by_string.setdefault(s, []).append(i)
            cut = min((s.find(b) for b in _BRACKETS if b in s), default=-1)
            if cut >= 0:
                self.bracketed.append((i, s[:cut], s[cut:]))
            elif "\n" not in s and "\r" not in s:
                word[i] = True
                start[i] = s == " " or _starts_slot(s)
                after_space[i] = not s[0].isspace()
        self.word, self.word_start, self.word_after_space = word, start, after_space
        self.longest = max((len(s) for s in self.by_string), default=1)

    def prefixes_of(self, text: str) -> list[int]:
        """Ids whose text is a non-empty prefix of ``text``."""
        out: list[int] = []
        for n in range(1, min(len(text), self.longest) + 1):
            out.extend(self.by_string.get(text[:n], ()))
        return out


def _starts_slot(s: str) -> bool:
    return len(s) >= 2 and s[0] == " " and not s[1].isspace()


class TemplateForcing:
    """One row's constraint: the answers of one template (:class:`AnswerPattern`).

    Args:
        pattern: the template's pieces.
        table: the tokenizer's :class:`TokenTable`.
        max_slot_words: after this many words (or 8 times as many characters) in a slot, only
            the next piece may follow (``None``: :data:`MAX_SLOT_WORDS`).
        max_words: the most words the whole answer may hold (``None``: no budget); at least one
            per slot whatever the budget.

    Attributes:
        budget_used: whether the budget has ended a slot early in some call (with beams: in
            some beam of the row).

    :meth:`allowed` returns a list of ids, or ``(mask, ids)``: the tokens of a vocabulary mask
    plus a few more (the protocol of :class:`paraamr.lms.constrained.ConstrainedLogits`).
    """

    def __init__(
        self,
        pattern: AnswerPattern,
        table: TokenTable,
        max_slot_words: int | None = None,
        max_words: int | None = None,
    ) -> None:
        self.pattern, self.table = pattern, table
        self.max_slot_words = max_slot_words or MAX_SLOT_WORDS
        self.max_words = max_words
        self.budget_used = False

    def state(self, text: str) -> tuple[str, int, str]:
        """Where ``text`` stands: ``("piece", k, rest of piece k)``, ``("slot", k, words so
        far)`` (the slot after piece ``k``) or ``("done", n, "")``.

        >>> f = TemplateForcing(AnswerPattern((" (S (NP", "))")), None)
        >>> [f.state(t) for t in (" (S", " (S (NP the cat", " (S (NP a)", " (S (NP a))")]
        [('piece', 0, ' (NP'), ('slot', 0, ' the cat'), ('piece', 1, ')'), ('done', 2, '')]

        Raises:
            ValueError: ``text`` is not the beginning of an answer of the pattern.
        """
        pieces, pos = self.pattern.pieces, 0
        for k, piece in enumerate(pieces):
            rest = text[pos:]
            if len(rest) < len(piece):
                if not piece.startswith(rest):
                    raise ValueError(f"{text!r} leaves the template at piece {k}")
                return ("piece", k, piece[len(rest) :])
            if not rest.startswith(piece):
                raise ValueError(f"{text!r} leaves the template at piece {k}")
            pos += len(piece)
            if k == len(pieces) - 1:
                if text[pos:]:
                    raise ValueError(f"{text!r} runs on after the template")
                return ("done", len(pieces), "")
            end = min((i for i in (text.find(b, pos) for b in _BRACKETS) if i >= 0), default=-1)
            if end < 0:
                return ("slot", k, text[pos:])
            words, pos = text[pos:end], end
            if not words.strip() or not _starts_slot(words):
                raise ValueError(f"{text!r} has an empty slot after piece {k}")
        raise AssertionError("unreachable")  # pragma: no cover

    def allowed(self, generated: Sequence[int]) -> list[int] | tuple[Any, list[int]]:
        """The ids that may follow the answer ids ``generated``."""
        t = self.table
        text = "".join(t.strings[int(i)] for i in generated if int(i) != t.eos)
        kind, k, rest = self.state(text)
        if kind == "done":
            return [t.eos]
        if kind == "piece":
            return t.prefixes_of(rest)
        nxt = self.pattern.pieces[k + 1]
        full = len(rest.split()) >= self.max_slot_words or len(rest) >= 8 * self.max_slot_words
        if rest and full:
            return t.prefixes_of(nxt)
        if rest.strip() and self._budget_spent(text, k):
            # finish the word being written (no space, no bracket), then the next piece
            self.budget_used = True
            ends = [
                i
                for i, words, br in t.bracketed
                if nxt.startswith(br) and not any(c.isspace() for c in words)
            ]
            return (t.word_after_space, ends)
        ends = [
            i for i, words, br in t.bracketed if nxt.startswith(br) and _words_may_end(rest, words)
        ]
        if not rest:
            return (t.word_start, ends)
        if rest == " ":
            return (t.word_after_space, ends)
        return (t.word, ends)

    def _budget_spent(self, text: str, k: int) -> bool:
        """Whether the words of ``text`` (in slot ``k``) and one word for each later slot reach
        the budget."""
        from paraamr.lms.repeats import answer_words  # the words the word cap counts

        if self.max_words is None:
            return False
        later = self.pattern.slots - 1 - k
        return len(answer_words(text)) + later >= self.max_words


def _words_may_end(slot: str, words: str) -> bool:
    """Whether a token's words part may end a slot that holds ``slot`` so far (a slot is a
    space and at least one word)."""
    if "\n" in words or "\r" in words:
        return False
    return bool((slot + words).strip()) and _starts_slot(slot + words)


@functools.lru_cache(maxsize=4096)
def _pattern(template: str) -> AnswerPattern | None:
    try:
        return AnswerPattern.from_template(template)
    except TreeError:
        return None


def forcings(
    templates: Sequence[str | None],
    table: TokenTable,
    max_slot_words: int | None = None,
    max_words: Sequence[int | None] | None = None,
) -> tuple[list[TemplateForcing | None], int]:
    """One :class:`TemplateForcing` per row (``None``: no template, or one that is not a
    well-formed word-free tree; that row decodes freely) and the count of such rows;
    ``max_words``: each row's word budget (``None``: none).

    >>> rows, free = forcings(["(ROOT (NP))", None, "(ROOT (NP"], table=None)
    >>> [r is None for r in rows], free
    ([False, True, True], 2)
    """
    budgets = list(max_words) if max_words is not None else [None] * len(templates)
    rows: list[TemplateForcing | None] = []
    for tmpl, budget in zip(templates, budgets, strict=True):
        pat = _pattern(tmpl) if tmpl else None
        rows.append(
            TemplateForcing(pat, table, max_slot_words, budget) if pat is not None else None
        )
    return rows, sum(r is None for r in rows)
