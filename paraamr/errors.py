"""Exception tree of the suite, rooted in :class:`ParaAMRError`."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = [
    "cli_errors",
    "describe_error",
    "ParaAMRError",
    "ConfigError",
    "CorpusFormatError",
    "TreeError",
    "ParserError",
    "DataNotFoundError",
    "TrainingError",
    "AMRError",
    "InputError",
    "MissingDependencyError",
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


class MissingDependencyError(ParaAMRError, ImportError):
    """An optional package (an online path's ``datasets``) is not installed; the message names
    the extra that brings it."""


def describe_error(e: BaseException) -> str:
    """One line for an error a user can fix (a missing file names the file).

    >>> describe_error(FileNotFoundError(2, "No such file or directory", "x.tsv"))
    'x.tsv: no such file or directory'
    """
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.filename}: {(e.strerror or str(e)).lower()}"
    return " ".join(str(e).split())


def cli_errors(prog: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a command-line ``main(argv)``: a :class:`ParaAMRError` or a missing / unreadable
    file ends the command with one line ``<prog>: error: <reason>`` on stderr and exit status 2
    (argparse's own convention); ``--debug`` (anywhere in ``argv``) or ``PARAAMR_DEBUG=1`` lets
    the traceback through. Output piped into a reader that stops early (``| head``) ends the
    command quietly with status 141, as a command killed by SIGPIPE.

    >>> @cli_errors("demo")
    ... def main(argv=None):
    ...     raise ConfigError("--depth must be >= 1, got -1")
    >>> try:
    ...     main([])
    ... except SystemExit as e:
    ...     print(e.code)
    2
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def main(argv: list[str] | None = None) -> Any:
            args = list(sys.argv[1:] if argv is None else argv)
            debug = "--debug" in args or os.environ.get("PARAAMR_DEBUG") == "1"
            args = [a for a in args if a != "--debug"]
            try:
                return fn(args)
            except (ParaAMRError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
                if debug:
                    raise
                print(f"{prog}: error: {describe_error(e)}", file=sys.stderr)
                raise SystemExit(2) from None
            except BrokenPipeError:
                # the reader went away (`paraamr … | head`): stop quietly with the status a
                # command killed by SIGPIPE has; stdout now points at /dev/null so that the
                # interpreter's last flush of the closed pipe does not fail again
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise SystemExit(141) from None

        return main

    return wrap
