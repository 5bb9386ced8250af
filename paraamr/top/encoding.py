"""The generator's sequence encoding of TOP trees and templates (Tran & Tan, §2).

Two changes to the bracket string: non-terminal labels are lowercased (so a subword
tokenizer does not over-segment them) and every closing bracket names what it closes
(``]`` becomes ``in:get_distance]``, giving the model the scope of each intent and slot).
The paper's Figure 4 pair:

>>> from paraamr.top.trees import parse_tree, to_string
>>> from paraamr.top.templates import template
>>> t = parse_tree("[IN:GET_DISTANCE How far is [SL:DESTINATION [IN:GET_LOCATION "
...                "[SL:CATEGORY_LOCATION the coffee shop ] ] ] ]")
>>> source = ("[in:get_distance [mask] [sl:destination [in:get_location "
...           "[sl:category_location [mask] sl:category_location] in:get_location] "
...           "sl:destination] in:get_distance]")
>>> target = ("[in:get_distance How far is [sl:destination [in:get_location "
...           "[sl:category_location the coffee shop sl:category_location] in:get_location] "
...           "sl:destination] in:get_distance]")
>>> encode(template(t)) == source, encode(t) == target
(True, True)
>>> to_string(decode(encode(t))) == to_string(t)
True

:func:`decode` turns a generated string back into a tree or raises :class:`DecodeError`,
whose ``kind`` (one of :data:`DECODE_ERROR_KINDS`) generation code counts. Labels are
restored through a :class:`LabelVocab` built from the training trees (an unknown label is
an error, the paper's "invalid labels"); without one, the label name is upper-cased.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from paraamr.errors import InputError, ParaAMRError
from paraamr.top.trees import (
    LABEL_PREFIXES,
    MASK,
    TREE_ERROR_KINDS,
    Node,
    iter_nodes,
)

__all__ = [
    "DECODE_ERROR_KINDS",
    "DecodeError",
    "LabelVocab",
    "encode",
    "decode",
    "try_decode",
]

DECODE_ERROR_KINDS = (*TREE_ERROR_KINDS, "mismatched_close", "unknown_label", "mask")
_OPEN = re.compile(r"\[((?:in|sl):[^\s\[\]]+)", re.IGNORECASE)
_CLOSE = re.compile(r"((?:in|sl):[^\s\[\]]+)\]", re.IGNORECASE)
_TOKEN = re.compile(r"\S+")


class DecodeError(ParaAMRError):
    """A generated string is not a valid encoded tree.

    Attributes:
        kind: one of :data:`DECODE_ERROR_KINDS`.
        position: 0-based character offset of the offending token (``None`` for ``empty``).
        text: the decoded string.
    """

    def __init__(self, kind: str, message: str, text: str, position: int | None = None):
        self.kind, self.position, self.text, self.reason = kind, position, text, message
        at = f" (char {position})" if position is not None else ""
        shown = text if len(text) <= 120 else text[:117] + "..."
        super().__init__(f"{kind}: {message}{at} in {shown!r}")


def _lower(label: str) -> str:
    return label.lower()


@dataclass
class LabelVocab:
    """Map from encoded (lowercased) labels back to the original labels.

    >>> from paraamr.top.trees import parse_tree
    >>> v = LabelVocab.from_trees([parse_tree("[IN:GET_EVENT [SL:Date x ] ]")])
    >>> v.restore("sl:date"), v.restore("in:get_event"), v.restore("sl:nope")
    ('SL:Date', 'IN:GET_EVENT', None)
    """

    by_encoded: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_trees(cls, trees: Iterable[Node]) -> LabelVocab:
        """Every label of ``trees``; two labels equal up to case are rejected."""
        vocab = cls()
        for t in trees:
            for n in iter_nodes(t):
                vocab.add(n.label)
        return vocab

    @classmethod
    def from_labels(cls, labels: Iterable[str]) -> LabelVocab:
        vocab = cls()
        for lab in labels:
            vocab.add(lab)
        return vocab

    def add(self, label: str) -> None:
        if label[:3] not in LABEL_PREFIXES or len(label) == 3:
            raise InputError(f"label {label!r} must be IN:NAME or SL:NAME")
        key = _lower(label)
        seen = self.by_encoded.setdefault(key, label)
        if seen != label:
            raise InputError(
                f"labels {seen!r} and {label!r} differ only in case: the lowercased "
                "encoding cannot tell them apart"
            )

    def restore(self, encoded: str) -> str | None:
        return self.by_encoded.get(_lower(encoded))

    @property
    def labels(self) -> list[str]:
        return sorted(self.by_encoded.values())

    def __len__(self) -> int:
        return len(self.by_encoded)

    def __contains__(self, label: object) -> bool:
        return isinstance(label, str) and _lower(label) in self.by_encoded

    def to_json(self) -> list[str]:
        return self.labels

    @classmethod
    def from_json(cls, labels: list[str] | Mapping[str, str]) -> LabelVocab:
        return cls.from_labels(labels.values() if isinstance(labels, Mapping) else labels)


def _enc(node: Node, out: list[str]) -> None:
    lab = _lower(node.label)
    out.append("[" + lab)
    for c in node.children:
        if isinstance(c, Node):
            _enc(c, out)
        else:
            out.append(c)
    out.append(lab + "]")


def encode(node: Node) -> str:
    """Encode a tree or template (see the module docstring).

    >>> from paraamr.top.trees import parse_tree
    >>> encode(parse_tree("[IN:A x [SL:B y ] ]"))
    '[in:a x [sl:b y sl:b] in:a]'
    """
    out: list[str] = []
    _enc(node, out)
    return " ".join(out)


def _restore(encoded: str, vocab: LabelVocab | None, text: str, pos: int) -> str:
    prefix, name = encoded[:3], encoded[3:]
    if vocab is not None:
        lab = vocab.restore(encoded)
        if lab is None:
            raise DecodeError("unknown_label", f"label {encoded!r} is not in the vocab", text, pos)
        return lab
    return prefix.upper() + name.upper()


def decode(
    text: str, vocab: LabelVocab | None = None, *, masks: bool = False, allow_empty: bool = False
) -> Node:
    """Decode an encoded string into a tree.

    Args:
        text: generator output (any whitespace between tokens).
        vocab: label inventory; ``None`` upper-cases label names instead.
        masks: accept ``[mask]`` terminals (decoding templates); otherwise a ``[mask]``
            left in a generated tree is an error of kind ``mask``.
        allow_empty: accept empty spans (as :func:`~paraamr.top.trees.parse_tree`).

    Raises:
        DecodeError: the string is not a valid encoded tree.

    >>> from paraamr.top.trees import to_string
    >>> to_string(decode("[in:a x [sl:b y sl:b] in:a]"))
    '[IN:A x [SL:B y ] ]'
    >>> try_decode("[in:a x [sl:b y in:a] sl:b]")
    (None, 'mismatched_close')
    >>> decode("[in:a x [sl:b y in:a] sl:b]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    paraamr.top.encoding.DecodeError: mismatched_close: 'in:a]' closes '[sl:b' ... (char 16) ...
    """
    stack: list[tuple[str, str, int, list]] = []  # (encoded, label, offset, children)
    root: Node | None = None
    seen = False
    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        seen = True
        if root is not None and _CLOSE.fullmatch(tok) is None:
            raise DecodeError("outside_root", f"token {tok!r} after the root is closed", text, pos)
        if tok == MASK:
            if not masks:
                raise DecodeError("mask", "a [mask] is left in the output", text, pos)
            if not stack:
                raise DecodeError("outside_root", "[mask] outside the root", text, pos)
            stack[-1][3].append(tok)
            continue
        if tok.startswith("["):
            mo = _OPEN.fullmatch(tok)
            if mo is None:
                raise DecodeError(
                    "bad_label", f"bad opening token {tok!r} (expected [in:name or [sl:name)",
                    text, pos,
                )  # fmt: skip
            enc = _lower(mo.group(1))
            stack.append((enc, _restore(enc, vocab, text, pos), pos, []))
            continue
        mc = _CLOSE.fullmatch(tok)
        if mc is not None:
            enc = _lower(mc.group(1))
            if not stack:
                raise DecodeError("unbalanced", f"{tok!r} closes nothing", text, pos)
            want, label, opened, children = stack.pop()
            if enc != want:
                raise DecodeError(
                    "mismatched_close",
                    f"{tok!r} closes '[{want}' (opened at char {opened})",
                    text,
                    pos,
                )
            if not children and not allow_empty:
                raise DecodeError("empty_span", f"'[{want}' has no children", text, opened)
            node = Node(label, tuple(children))
            if stack:
                stack[-1][3].append(node)
            else:
                root = node
            continue
        if "[" in tok or "]" in tok:
            raise DecodeError("bracket_in_word", f"word {tok!r} contains a bracket", text, pos)
        if not stack:
            raise DecodeError("outside_root", f"word {tok!r} outside the root", text, pos)
        stack[-1][3].append(tok)
    if not seen:
        raise DecodeError("empty", "empty output", text)
    if stack:
        enc, _, opened, _ = stack[-1]
        raise DecodeError("unbalanced", f"'[{enc}' is never closed", text, opened)
    assert root is not None
    return root


def try_decode(text: str, vocab: LabelVocab | None = None) -> tuple[Node | None, str | None]:
    """``(tree, None)`` or ``(None, error kind)``: for loops that count failures.

    >>> try_decode("[in:a x in:a]")[0] is not None, try_decode("[in:a x")[1]
    (True, 'unbalanced')
    """
    try:
        return decode(text, vocab), None
    except DecodeError as e:
        return None, e.kind
