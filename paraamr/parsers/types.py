"""The types every constituency parser backend shares: :class:`Parsed` and the
:class:`ParserBackend` protocol (apart from :mod:`paraamr.parsers.base`, which imports the
backends, so the backends need not import it back).

>>> Parsed(("I", "know"), "(ROOT (S (NP (PRP I)) (VP (VBP know))))").tokens
('I', 'know')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from paraamr.errors import ParserError

__all__ = ["Parsed", "ParserBackend"]


@dataclass(frozen=True)
class Parsed:
    """A parsed sentence: the parser's tokens (as written) and a PTB bracket string."""

    tokens: tuple[str, ...]
    tree: str


class ParserBackend(Protocol):
    name: str

    def signature(self) -> str:
        """Which parser and model produced the trees, e.g. ``spacy-projection(...)``."""
        ...

    def parse(self, sentences: Sequence[str]) -> list[Parsed | ParserError]:
        """Parse a batch; one result per input, in order."""
        ...
