"""Constituency parser backends behind one interface (see :mod:`paraamr.parsers.base`)."""

from paraamr.parsers.base import BACKENDS, Parsed, ParserBackend, make_parser, parse_unique

__all__ = ["BACKENDS", "Parsed", "ParserBackend", "make_parser", "parse_unique"]
