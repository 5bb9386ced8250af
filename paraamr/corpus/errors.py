"""Bad-input policy shared by every stage: raise with file and line, or skip and count.

>>> log = SkipLog("skip")
>>> log.skip("empty sentence", "corpus.jsonl", 3)
>>> dict(log.counts)
{'empty sentence': 1}
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from paraamr.errors import ConfigError, CorpusFormatError

__all__ = ["SkipLog", "ON_ERROR", "CLI_HINT", "check_on_error"]

log = logging.getLogger(__name__)
ON_ERROR = ("raise", "skip")


def check_on_error(value: str, key: str = "on_error") -> str:
    """The one check of an ``on_error`` setting; the error names the config key.

    >>> check_on_error("skip")
    'skip'
    >>> check_on_error("ignore", "data.on_error")
    Traceback (most recent call last):
    paraamr.errors.ConfigError: data.on_error must be one of ('raise', 'skip'), got 'ignore'
    """
    if value not in ON_ERROR:
        raise ConfigError(f"{key} must be one of {ON_ERROR}, got {value!r}")
    return value


CLI_HINT = "use --on-error skip to skip and count such records"


@dataclass
class SkipLog:
    """Counts skipped records by reason; with ``on_error="raise"`` raises instead of skipping.

    ``hint`` ends the raised error: the Hydra key by default, :data:`CLI_HINT` (the flag) in
    command-line tools."""

    on_error: str = "raise"
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    max_warnings: int = 10
    hint: str = "pass on_error=skip to skip and count such records"

    def __post_init__(self) -> None:
        check_on_error(self.on_error)
        self.counts = Counter(self.counts)

    def skip(
        self, reason: str, path: str | None = None, line: int | str | None = None, detail: str = ""
    ) -> None:
        """Record a bad record: raise :class:`CorpusFormatError`, or count it and warn.

        Records are counted by ``reason``; ``detail`` (which record, what else) is added to the
        raised message and the warning, so counts do not split by it."""
        said = f"{reason}: {detail}" if detail else reason
        if self.on_error == "raise":
            raise CorpusFormatError(f"{said} ({self.hint})", path, line)
        self.counts[reason] += 1
        where = f"{path}:{line}" if path is not None else "?"
        self.examples.setdefault(reason, where)
        if self.total <= self.max_warnings:
            log.warning("skipped %s: %s", where, said)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def merge(self, other: SkipLog) -> None:
        self.counts.update(other.counts)
        for k, v in other.examples.items():
            self.examples.setdefault(k, v)

    def summary(self) -> dict[str, object]:
        return {"total": self.total, "by_reason": dict(self.counts), "first_seen": self.examples}
