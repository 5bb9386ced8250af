"""Template infilling: the model writes the target tree cut at the template's depth with the
words in its leaves, and the paraphrase is the tree's words.

Training answer for the target ``how can i make money online ?`` and depth 4::

    (ROOT (SBARQ (WHADVP (WRB how)) (SQ (MD can) (NP i) (VP make money online)) (. ?)))

for the template ``(ROOT (SBARQ (WHADVP (WRB)) (SQ (MD) (NP) (VP)) (.)))``: each node at the cut
depth (and each part-of-speech node above it) holds the words of its subtree. Copying brackets
from the prompt is what a pretrained decoder learns first; what is left to learn is which words
go in which slot (the TOP paper's template -> tree-with-words method, on constituency templates).

Reading a generated answer (:func:`read_answer`) never loses a line silently: a well-formed tree
gives its words (``ok``); an answer with unbalanced brackets or stray words around its tree gives
the words it has (``repaired``); one with no word at all is a ``failed`` answer (its text is
empty and it is counted). Labels are the tokens right after ``(``; every other token is a word,
so an empty slot ``(NP)`` is a node, not the word "NP".

>>> parse = "(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"
>>> infill(parse, 3)
'(ROOT (S (NP I) (VP know it) (. .)))'
>>> a = read_answer("(ROOT (S (NP I) (VP know it) (. .)))")
>>> a.text, a.status, a.structure
('I know it.', 'ok', '(ROOT (S (NP) (VP) (.)))')
>>> read_answer("(ROOT (S (NP we) (VP know").status
'repaired'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from paraamr.metrics.trees import Tree, is_preterminal, leaves, to_bracketed
from paraamr.scpn.formats import read_tree

__all__ = [
    "OUTPUT_FORMATS",
    "Answer",
    "infill",
    "read_answer",
    "detokenize",
    "normalise_template",
]

OUTPUT_FORMATS = ("plain", "tree")

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}"}


def _cut(tree: Tree, depth: int) -> Tree:
    label, children = tree
    if not children:  # a word
        return tree
    if depth == 1 or is_preterminal(tree):
        return (label, tuple((w, ()) for w in leaves(tree)))
    return (label, tuple(_cut(c, depth - 1) for c in children))


def infill(tree: str | Tree, depth: int | None) -> str:
    """A parse *with words* cut at ``depth`` (root = 1), each cut node holding its words.

    ``depth=None`` keeps the whole tree. The word-free version of the result is the template
    :func:`paraamr.scpn.formats.linearize` gives at the same depth.

    >>> infill("(ROOT (NP (DT the) (NN cat)))", 2)
    '(ROOT (NP the cat))'
    >>> infill("(ROOT (NP (DT the) (NN cat)))", None)
    '(ROOT (NP (DT the) (NN cat)))'

    Raises:
        TreeError: the string is not one well-formed tree.
    """
    t = read_tree(tree)
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1 or None, got {depth}")
    return to_bracketed(t if depth is None else _cut(t, depth))


@dataclass(frozen=True)
class Answer:
    """A generated tree answer read back.

    Attributes:
        text: the paraphrase (the answer's words, detokenized; empty when ``failed``).
        status: ``ok`` (one well-formed tree), ``repaired`` (brackets closed or stray words
            kept), or ``failed`` (no word could be read).
        structure: the answer's word-free tree (every node bracketed), ``None`` without one.
    """

    text: str
    status: str
    structure: str | None

    def follows(self, template: str) -> bool:
        """Whether the answer's bracket structure is exactly ``template`` (word-free).

        >>> read_answer("(ROOT (NP the cat))").follows("(ROOT (NP))")
        True
        """
        return self.structure is not None and self.structure == normalise_template(template)


def normalise_template(template: str) -> str:
    """A word-free template written the one way answers are compared with it.

    >>> normalise_template("( ROOT  (NP ) )")
    '(ROOT (NP))'
    """
    return " ".join(_TOKEN.findall(template)).replace("( ", "(").replace(" )", ")")


def _write(node: list) -> str:
    label, kids = node[0], [k for k in node[1] if isinstance(k, list)]
    if not kids:
        return f"({label})"
    return f"({label} " + " ".join(_write(k) for k in kids) + ")"


def read_answer(text: str) -> Answer:
    """Read a generated answer: its words, its structure and whether it needed repair.

    The first tree is read up to the bracket that closes its root; what follows is ignored
    (a model that runs on). Unclosed brackets are closed; words before the root or after an
    extra ``)`` are kept in order. A plain sentence (no bracket) is ``repaired`` into its words.

    >>> read_answer("(ROOT (NP the) (VP)) (ROOT junk)").text
    'the'
    >>> read_answer("the cat sat").status, read_answer("(ROOT (NP) (VP))").status
    ('repaired', 'failed')
    """
    tokens = _TOKEN.findall(text or "")
    words: list[str] = []
    stack: list[list] = []
    root: list | None = None
    repaired = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            label = ""
            if i + 1 < len(tokens) and tokens[i + 1] not in "()":
                label, i = tokens[i + 1], i + 1
            node: list = [label, []]
            if stack:
                stack[-1][1].append(node)
            stack.append(node)
        elif tok == ")":
            if not stack:
                repaired = True  # an extra closing bracket
            else:
                done = stack.pop()
                if not stack:
                    root = done
                    break
        else:
            words.append(_UNESCAPE.get(tok, tok))
            if stack:
                stack[-1][1].append(tok)
            else:
                repaired = True  # a word outside any bracket
        i += 1
    if stack:  # unclosed brackets
        repaired = True
        root = stack[0]
    if not words:
        return Answer("", "failed", _write(root) if root else None)
    structure = _write(root) if root else None
    return Answer(detokenize(words), "repaired" if repaired else "ok", structure)


_ATTACH_LEFT = {".", ",", "?", "!", ":", ";", "%", ")", "]", "}", "n't", "'s", "'re", "'ll", "'ve",
                "'m", "'d", "'", "...", "''"}  # fmt: skip
_ATTACH_RIGHT = {"(", "[", "{", "$", "``", "#"}


def detokenize(words: Sequence[str]) -> str:
    """Join parser tokens back into text: punctuation and clitics attach to the word before.

    >>> detokenize(["how", "ca", "n't", "i", "do", "it", "?"])
    "how can't i do it?"
    """
    out, prev = "", ""
    for w in words:
        if out and (w.lower() in _ATTACH_LEFT or prev in _ATTACH_RIGHT):
            out += w
        else:
            out += (" " if out else "") + w
        prev = w
    return out
