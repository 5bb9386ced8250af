"""Exception tree of the suite, rooted in :class:`ParaAMRError`."""

from __future__ import annotations

__all__ = [
    "ParaAMRError",
    "ConfigError",
    "CorpusFormatError",
    "TreeError",
    "ParserError",
    "DataNotFoundError",
    "TrainingError",
    "AMRError",
    "InputError",
]


class ParaAMRError(Exception):
    """Base class of every error raised on purpose by paraamr."""


class CorpusFormatError(ParaAMRError):
    """A corpus record cannot be read. Carries the file and 1-based line number."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path, self.line, self.reason = path, line, message
        where = f"{path}:{line}: " if path is not None and line is not None else ""
        super().__init__(f"{where}{message}")


class TreeError(ParaAMRError):
    """A constituency tree string cannot be read."""


class ParserError(ParaAMRError):
    """A parser backend could not produce a tree for a sentence."""


class DataNotFoundError(ParaAMRError):
    """Input data is missing; the message says how to get it or where to point."""


class ConfigError(ParaAMRError, ValueError):
    """A setting is invalid; the message names the config key (``section.key``)."""


class TrainingError(ParaAMRError, RuntimeError):
    """Training cannot go on (a non-finite loss, no checkpoint to export)."""


class AMRError(ParaAMRError):
    """
    An AMR graph cannot be read, re-focused or laid out.

    Args:
        message: what went wrong
        path: the file the graph comes from, if any
        line: the 1-based line number in *path*, if any

    Example:
        >>> str(AMRError("unbalanced parentheses", path="x.txt", line=7))
        'x.txt:7: unbalanced parentheses'
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path, self.line, self.reason = path, line, message
        where = f"{path}:{line}: " if path is not None and line is not None else ""
        super().__init__(f"{where}{message}")


class InputError(ParaAMRError, ValueError):
    """A function got a value it cannot work with (empty token lists, a non-finite metric value,
    mismatched shapes); the message says which."""
