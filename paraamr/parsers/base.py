"""One interface for constituency parser backends (the types in :mod:`paraamr.parsers.types`,
which the backends import; this module builds them by name).

A backend turns sentences into :class:`Parsed` results (tokens + PTB bracket string), batched, and
reports a failure per sentence as a :class:`~paraamr.errors.ParserError` instead of raising, so the
caller decides (raise with file and line, or skip and count).

>>> p = Parsed(("I", "know"), "(ROOT (S (NP (PRP I)) (VP (VBP know))))")
>>> p.tokens
('I', 'know')
"""

from __future__ import annotations

from collections.abc import Iterable

from paraamr.errors import ConfigError, ParserError
from paraamr.parsers.types import Parsed, ParserBackend
from paraamr.utils import map_length_batches

__all__ = ["Parsed", "ParserBackend", "parse_unique", "make_parser", "BACKENDS"]


def parse_unique(
    sentences: Iterable[str], parser: ParserBackend, batch_size: int = 256
) -> dict[str, Parsed | ParserError]:
    """Parse each distinct sentence once, in batches sorted by length (less padding)."""
    uniq = list(dict.fromkeys(sentences))
    return dict(zip(uniq, map_length_batches(uniq, parser.parse, batch_size), strict=True))


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
