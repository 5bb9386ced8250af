"""One interface for constituency parser backends.

A backend turns sentences into :class:`Parsed` results (tokens + PTB bracket string), batched, and
reports a failure per sentence as a :class:`~paraamr.errors.ParserError` instead of raising, so the
caller decides (raise with file and line, or skip and count).

>>> p = Parsed(("I", "know"), "(ROOT (S (NP (PRP I)) (VP (VBP know))))")
>>> p.tokens
('I', 'know')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from paraamr.errors import ConfigError, ParserError

__all__ = ["Parsed", "ParserBackend", "parse_unique", "make_parser", "BACKENDS"]


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


def parse_unique(
    sentences: Iterable[str], parser: ParserBackend, batch_size: int = 256
) -> dict[str, Parsed | ParserError]:
    """Parse each distinct sentence once, in batches sorted by length (less padding)."""
    uniq = list(dict.fromkeys(sentences))
    uniq.sort(key=len)
    out: dict[str, Parsed | ParserError] = {}
    for i in range(0, len(uniq), batch_size):
        batch = uniq[i : i + batch_size]
        out.update(zip(batch, parser.parse(batch), strict=True))
    return out


BACKENDS = ("spacy", "stanza", "gold")


def make_parser(name: str, **kwargs) -> ParserBackend:
    """Build a backend by name: ``spacy`` (offline default), ``stanza`` (paper), ``gold``."""
    if name == "spacy":
        from paraamr.parsers.spacy_backend import SpacyParser

        return SpacyParser(**kwargs)
    if name == "stanza":
        from paraamr.parsers.stanza_backend import StanzaParser

        return StanzaParser(**kwargs)
    if name == "gold":
        from paraamr.parsers.gold import GoldParser

        return GoldParser(**kwargs)
    raise ConfigError(f"parser: unknown parser backend {name!r}; choose one of {BACKENDS}")
