"""The one on-disk cache of the project: an append-only JSON-lines file whose first line names
the signature of what wrote it (a parser, an LM scorer), so a rerun reuses every row and a file
written with other settings is refused instead of silently mixed in.

Rows are appended as they are computed, so an interrupted run loses at most the rows it had
not flushed; an unreadable line (a crash mid-write leaves a truncated last line) is skipped
and counted in :attr:`JsonlCache.n_bad_lines`, never raised.

Examples:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "c.jsonl")
    >>> JsonlCache(path, "parser:a").append([{"text": "x", "parse": "(S)"}])
    >>> list(JsonlCache(path, "parser:a").rows())
    [{'text': 'x', 'parse': '(S)'}]
    >>> list(JsonlCache(path, "parser:b").rows())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    paraamr.errors.ConfigError: ...c.jsonl was written by 'parser:a', not 'parser:b': use ...
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from paraamr.errors import ConfigError

__all__ = ["JsonlCache"]

log = logging.getLogger(__name__)


class JsonlCache:
    """A signature-stamped, append-only JSON-lines cache file.

    Args:
        path: the file (created with its folder on the first :meth:`append`).
        signature: what writes the rows; the first line is ``{header_key: signature}``.
        header_key: the first line's key (``parser`` in the SCPN parse caches).
    """

    def __init__(
        self, path: str | os.PathLike, signature: str, header_key: str = "signature"
    ) -> None:
        self.path, self.signature, self.header_key = Path(path), signature, header_key
        self.n_bad_lines = 0

    def rows(self) -> Iterator[dict[str, Any]]:
        """The stored rows in file order (none when the file does not exist yet).

        Raises:
            ConfigError: the file was written with another signature.
        """
        if not self.path.is_file():
            return
        self.n_bad_lines = 0
        with open(self.path, encoding="utf-8") as fh:
            first = fh.readline()
            if not first.strip():
                return
            try:
                head = json.loads(first)
            except ValueError:
                head = {}
            if head.get(self.header_key) != self.signature:
                raise ConfigError(
                    f"{self.path} was written by {head.get(self.header_key)!r}, not "
                    f"{self.signature!r}: use another file"
                )
            for line in fh:
                try:
                    row = json.loads(line)
                except ValueError:
                    self.n_bad_lines += 1
                    continue
                if isinstance(row, dict):
                    yield row
                else:
                    self.n_bad_lines += 1
        if self.n_bad_lines:
            log.warning("%s: %d unreadable lines skipped", self.path, self.n_bad_lines)

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append ``rows`` (the signature line first when the file is new or empty), flushed."""
        rows = list(rows)
        if not rows:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            if fh.tell() == 0:
                fh.write(json.dumps({self.header_key: self.signature}) + "\n")
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
