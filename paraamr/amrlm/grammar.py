"""The parser's answer as a grammar: one serialized AMR graph, written once and enforced by
every engine that decodes the parser.

A serialized graph (:func:`paraamr.amr.serialize.serialize`) is ``( concept :role value … )``,
one space between items; a value is a nested graph, a concept again (a re-entrancy) or a
constant (``-``, ``6``, ``"Stories"``); a concept or constant holds no character that PENMAN
reads as syntax (``/ : ~ #``, brackets, spaces, control characters), so every string of the
grammar decodes. :func:`graph_grammar` writes that language in the EBNF
dialect of XGrammar (what OpenVINO GenAI's structured output and vLLM's guided decoding run,
and what :class:`GrammarLogits` runs on the PyTorch and OpenVINO engines), with

- roles from the AMR 3.0 role set only: ``:ARG0``-``:ARG9``, ``:op1``…, ``:snt1``…,
  ``:prep-X`` / ``:conj-X``, the named relations of :data:`ROLE_NAMES`, each also as its
  inverse ``-of``;
- at most ``max_depth`` graphs open at once (the nesting unrolled, so the grammar stays a
  finite one);
- at most one space before the graph (the parser's first token is ``" ("`` as often as
  ``"("``: forcing one of them moves the whole answer);
- the end of the answer right after the outermost graph closes (one graph per answer).

A grammar cannot count tokens, so the answer cap (``model.answer_cap``) is the engine's length
limit: an answer cut by it is closed by :func:`close_graph` (a dangling role dropped, every
open bracket closed), which is what the PyTorch constraint
(:class:`paraamr.amrlm.constraint.BalancedGraph`) does inside the limit.

Examples:
    >>> g = graph_grammar(max_depth=3)
    >>> accepts(g, "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )")
    True
    >>> accepts(g, "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy )")  # not closed
    False
    >>> accepts(g, "( want-01 :agent ( boy ) )")                          # no such role
    False
    >>> accepts(g, "( a :mod ( b :mod ( c :mod ( d ) ) ) )")              # depth 4 > 3
    False
    >>> close_graph("( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0")
    '( want-01 :ARG0 ( boy ) :ARG1 ( go-02 ) )'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["ROLE_NAMES", "graph_grammar", "accepts", "close_graph", "GrammarLogits"]

#: AMR 3.0's named relations (the guidelines' general, quantity, date and list relations);
#: numbered ones (``:ARGn``, ``:opn``, ``:sntn``) and ``:prep-X`` / ``:conj-X`` are patterns
ROLE_NAMES = (
    "accompanier", "age", "beneficiary", "cause", "compared-to", "concession", "condition",
    "consist-of", "degree", "destination", "direction", "domain", "duration", "example",
    "extent", "frequency", "instrument", "li", "location", "manner", "medium", "mod", "mode",
    "name", "ord", "part", "path", "polarity", "polite", "poss", "purpose", "quant", "range",
    "scale", "source", "subevent", "subset", "superset", "time", "topic", "unit", "value",
    "wiki", "calendar", "century", "day", "dayperiod", "decade", "era", "month", "quarter",
    "season", "timezone", "weekday", "year", "year2",
)  # fmt: skip


@functools.lru_cache(maxsize=16)
def graph_grammar(max_depth: int | None = 40) -> str:
    """The EBNF grammar of one serialized graph with at most ``max_depth`` graphs open at
    once (``None``: unbounded nesting). The start rule is ``root``."""
    names = " | ".join(f'"{n}"' for n in sorted(ROLE_NAMES, key=lambda n: (-len(n), n)))
    lines = [
        'root ::= " "? graph1',
        'concept ::= [^\\x00-\\x20()":/~#\\\\]+',
        'atom ::= concept | "\\"" [^\\x00-\\x1f"\\\\]+ "\\""',
        'role ::= ":" ("ARG" [0-9] | "op" [1-9] [0-9]* | "snt" [1-9] [0-9]* '
        f'| ("prep" | "conj") ("-" [a-z]+)+ | {names}) "-of"?',
    ]  # fmt: skip
    if max_depth is None:
        lines += ['graph1 ::= "( " concept (" " role " " value)* " )"', "value ::= graph1 | atom"]
    else:
        if int(max_depth) < 1:
            raise ValueError(f"max_depth must be >= 1 or None, got {max_depth!r}")
        for d in range(1, int(max_depth) + 1):
            inner = f"(graph{d + 1} | atom)" if d < max_depth else "atom"
            lines.append(f'graph{d} ::= "( " concept (" " role " " {inner})* " )"')
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=4)
def _compiled_for_strings(grammar: str) -> Any:
    import xgrammar as xgr

    return xgr.Grammar.from_ebnf(grammar)


def accepts(grammar: str, text: str) -> bool:
    """Whether ``grammar`` (EBNF, start rule ``root``) matches the whole of ``text``, as
    XGrammar's matcher reads it character by character."""
    from xgrammar.testing import _is_grammar_accept_string

    return bool(_is_grammar_accept_string(_compiled_for_strings(grammar), text))


_ROLE_TAIL = re.compile(r"\s*:[^\s()]*\s*$")


def close_graph(text: str) -> str:
    """``text``, a serialized graph cut before its end, made whole: an open quote closed, a
    role left without its value dropped, then a ``)`` for every open bracket. A whole graph
    comes back unchanged.

    >>> close_graph("( a :op1 \\"New")
    '( a :op1 "New" )'
    >>> close_graph("( a :ARG0 ( b ) )")
    '( a :ARG0 ( b ) )'
    >>> close_graph("( a :ARG0 (")
    '( a )'
    """
    out = text.rstrip()
    if out.count('"') % 2:
        out += '"'
    while True:
        if out.endswith("("):  # a graph opened without a concept
            out = out[:-1].rstrip()
            continue
        cut = _ROLE_TAIL.sub("", out)
        if cut == out:
            break
        out = cut
    depth = out.count("(") - out.count(")")
    return out + " )" * max(0, depth)


class GrammarLogits:
    """A Hugging Face ``LogitsProcessor``: every row writes a string of ``grammar`` (XGrammar's
    matcher, one per row, fed the tokens the row wrote since ``start``); tokens the grammar
    does not allow get ``-inf``, and the end token only where the grammar may end.

    ``limits`` (one per row, or ``None``): a row's most answer tokens, after which it may
    only end (``eos``); the grammar cannot count, so :func:`close_graph` closes an answer the
    limit cuts, as on every engine.

    Args:
        tokenizer: the model's Hugging Face tokenizer.
        grammar: EBNF with start rule ``root`` (:func:`graph_grammar`).
        rows: the batch's rows.
        start: the first generated column (a decoder-only model: the prompt length).
        vocab: the model's vocabulary size (the logits' width; may exceed the tokenizer's).
        limits: each row's most answer tokens (``None``: the call's limit alone).
        eos: the end token (``None``: the tokenizer's).
    """

    def __init__(self, tokenizer: Any, grammar: str, rows: int, start: int, vocab: int,
                 limits: Sequence[int] | None = None, eos: int | None = None) -> None:  # fmt: skip
        import xgrammar as xgr

        if limits is not None and len(limits) != rows:
            raise ValueError(f"{rows} rows need {rows} limits, got {len(limits)}")
        self.limits = list(limits) if limits is not None else None
        self.eos = tokenizer.eos_token_id if eos is None else int(eos)
        compiled = _compiler(tokenizer, vocab).compile_grammar(grammar)
        self.matchers = [xgr.GrammarMatcher(compiled) for _ in range(rows)]
        self.seen = [0] * rows
        self.done = [False] * rows
        self.start = start
        self.bitmask = xgr.allocate_token_bitmask(rows, vocab)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import xgrammar as xgr

        written = input_ids.shape[1] - self.start
        for b, m in enumerate(self.matchers):
            if not self.done[b]:
                for t in input_ids[b, self.start + self.seen[b] : self.start + written].tolist():
                    if t == self.eos or not m.accept_token(t):
                        self.done[b] = True  # ended (a finished row's pads follow)
                        break
                self.seen[b] = written
            if self.done[b] or m.is_terminated():
                self.bitmask[b].fill_(-1)  # a finished row: its pad is not the grammar's
            else:
                m.fill_next_token_bitmask(self.bitmask, b)
        xgr.apply_token_bitmask_inplace(scores, self.bitmask.to(scores.device))
        if self.limits is not None:
            for b, cap in enumerate(self.limits):
                if written >= cap and not self.done[b]:  # cut: the row may only end
                    scores[b] = float("-inf")
                    scores[b, self.eos] = 0.0
        return scores


@functools.lru_cache(maxsize=4)
def _compiler(tokenizer: Any, vocab: int) -> Any:
    """XGrammar's compiler for ``tokenizer``'s vocabulary (read once per tokenizer)."""
    import xgrammar as xgr

    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab)
    return xgr.GrammarCompiler(info)
