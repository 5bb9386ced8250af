"""Small helpers every stage uses: chunking streams, limits, crash-safe file writes.

>>> list(chunked(range(5), 2))
[[0, 1], [2, 3], [4]]
>>> list(limited(iter("abc"), 2)), list(limited("abc", None))
(['a', 'b'], ['a', 'b', 'c'])
>>> list(length_batches([3, 1, 2], 2))
[[1, 2], [0]]
"""

from __future__ import annotations

import importlib
import itertools
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from paraamr.errors import ConfigError, MissingDependencyError

__all__ = [
    "available_cores",
    "cpu_model",
    "measured_on",
    "measured_text",
    "chunked",
    "length_batches",
    "map_length_batches",
    "limited",
    "whole_number",
    "write_json_atomic",
    "json_lines",
    "fsync_dir",
    "write_text_atomic",
    "logger_level",
]

T = TypeVar("T")


@contextmanager
def logger_level(name: str, level: int) -> Iterator[logging.Logger]:
    """Logger ``name`` at ``level`` inside the block, at its own level again after it.

    >>> log = logging.getLogger("paraamr.example")
    >>> with logger_level("paraamr.example", logging.ERROR):
    ...     log.level == logging.ERROR
    True
    >>> log.level == logging.NOTSET
    True
    """
    log = logging.getLogger(name)
    before, log.level = log.level, level
    try:
        yield log
    finally:
        log.setLevel(before)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Split a stream into lists of ``size`` items (the last may be shorter)."""
    if size < 1:
        raise ConfigError(f"chunk size must be >= 1, got {size}")
    buf: list[T] = []
    for it in items:
        buf.append(it)
        if len(buf) == size:
            yield buf
            buf = []
    if buf:
        yield buf


def length_batches(
    lengths: Sequence[int],
    batch_size: int,
    *,
    longest_first: bool = False,
    max_tokens: int | None = None,
) -> Iterator[list[int]]:
    """Indices in batches of ``batch_size``, sorted by ``lengths`` (stable: equal lengths keep
    input order), so each batch pads to similar lengths. The one length-sorted batching of the
    project (generation, encoding, scoring).

    With ``max_tokens`` (a token budget) a batch also stops before its padded size, items ×
    longest length, would pass the budget: short items go many to a batch, long ones few (an
    item longer than the budget gets a batch of its own).

    Examples:
        >>> list(length_batches([5, 1, 5, 2], 2, longest_first=True))
        [[0, 2], [3, 1]]
        >>> list(length_batches([5, 1, 5, 2, 1], 8, longest_first=True, max_tokens=10))
        [[0, 2], [3, 1, 4]]
    """
    if batch_size < 1:
        raise ConfigError(f"batch size must be >= 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1 or null, got {max_tokens}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i] if longest_first else lengths[i])
    if max_tokens is None:
        for start in range(0, len(order), batch_size):
            yield order[start : start + batch_size]
        return
    batch: list[int] = []
    width = 0
    for i in order:
        w = max(width, lengths[i])
        if batch and (len(batch) == batch_size or (len(batch) + 1) * w > max_tokens):
            yield batch
            batch, w = [], lengths[i]
        batch.append(i)
        width = w
    if batch:
        yield batch


def map_length_batches(
    items: Sequence[T],
    fn: Callable[[list[T]], Sequence[Any]],
    batch_size: int,
    *,
    lengths: Sequence[int] | None = None,
    longest_first: bool = False,
) -> list[Any]:
    """``fn`` over length-sorted batches of ``items``, one result per item in input order.

    Args:
        lengths: a length per item (``None``: ``len(item)``).

    >>> map_length_batches(["ccc", "a", "bb"], lambda b: [x.upper() for x in b], 2)
    ['CCC', 'A', 'BB']
    """
    lens = [len(x) for x in items] if lengths is None else list(lengths)  # type: ignore[arg-type]
    out: list[Any] = [None] * len(items)
    for idx in length_batches(lens, batch_size, longest_first=longest_first):
        res = fn([items[i] for i in idx])
        if len(res) != len(idx):
            raise ValueError(f"{len(res)} results for a batch of {len(idx)}")
        for i, r in zip(idx, res, strict=True):
            out[i] = r
    return out


def limited(items: Iterable[T], limit: int | None) -> Iterable[T]:
    """The first ``limit`` items (all of them when ``limit`` is ``None`` or 0)."""
    return items if not limit else itertools.islice(items, limit)


def is_whole(value: object, least: int = 0) -> bool:
    """Whether a config value is a whole number ``>= least`` (an ``int``, not a ``bool``).

    >>> is_whole(3, 2), is_whole(True), is_whole(2.0), is_whole("3"), is_whole(-1)
    (True, False, False, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def whole_number(least: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number ``>= least``; anything else is argparse's one-line
    usage error (``--limit`` is ``whole_number(0)``, a count ``whole_number(1)``).

    >>> whole_number(0)("0")
    0
    >>> whole_number(0)("-1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a whole number >= 0, got '-1'
    """
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}")
        return value

    return parse


def fsync_dir(path: str | os.PathLike) -> None:
    """Make renames inside directory ``path`` durable (no-op where directories can't be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def json_lines(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    r"""``(line number, value)`` for each line of a JSON-lines file the project wrote (a
    corpus, rejects, a key, training pairs), blank lines skipped; a line that is not JSON is a
    :class:`~paraamr.errors.CorpusFormatError` naming the file and the line. (User corpora with
    per-record checks and counted skips go through :func:`paraamr.corpus.read_corpus`.)

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write('{"a": 1}\n\n[2]\n{oops\n')
    >>> rows = json_lines(fh.name)
    >>> next(rows), next(rows)
    ((1, {'a': 1}), (3, [2]))
    >>> next(rows)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    paraamr.errors.CorpusFormatError: ...jsonl:4: not a JSON line (Expecting property name ...)
    """
    from paraamr.errors import CorpusFormatError

    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as e:
                raise CorpusFormatError(f"not a JSON line ({e.msg} at column {e.colno})",
                                        str(path), n) from None  # fmt: skip


def write_json_atomic(
    path: str | os.PathLike, obj: Any, default: Any = None, sort_keys: bool = True
) -> None:
    """:func:`write_text_atomic` of ``obj`` as indented JSON, keys sorted unless ``sort_keys`` is
    false (job results keep the order their readers lay out: STS years, TOP buckets);
    ``default`` as :func:`json.dumps`' for values JSON has no type for. The one way job results
    are written: a job killed while writing leaves its previous result or none, never half."""
    text = json.dumps(obj, indent=1, sort_keys=sort_keys, ensure_ascii=False, default=default)
    write_text_atomic(path, text)


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one).

    >>> available_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def cpu_model() -> str:
    """The CPU's model name as the OS reports it (``/proc/cpuinfo``, else ``platform``), or
    ``"unknown"``.

    >>> isinstance(cpu_model(), str) and cpu_model() != ""
    True
    """
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def measured_on() -> dict[str, Any]:
    """When and on what a measurement ran, for a result file: ``{"date": "YYYY-MM-DD",
    "cpu": cpu_model(), "cores": available_cores()}``.

    >>> sorted(measured_on())
    ['cores', 'cpu', 'date']
    """
    import datetime

    return {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "cores": available_cores(),
    }


def measured_text(stamps: Iterable[dict[str, Any] | None]) -> str:
    """One sentence naming the dates and CPUs of the :func:`measured_on` stamps (``None``: a
    result written before results were stamped).

    >>> measured_text([{"date": "2026-12-04", "cpu": "AMD EPYC", "cores": 2}, None])
    'Measured 2026-12-04 on AMD EPYC (2 cores); 1 result without a date or CPU.'
    """
    stamps = list(stamps)
    seen = sorted({(s["date"], s["cpu"], s.get("cores")) for s in stamps if s})
    missing = sum(1 for s in stamps if not s)
    parts = []
    if seen:
        dates = sorted({d for d, _, _ in seen})
        cpus = sorted({f"{c} ({n} cores)" if n else c for _, c, n in seen})
        parts.append(f"Measured {', '.join(dates)} on {'; '.join(cpus)}")
    if missing:
        parts.append(f"{missing} result{'s' if missing > 1 else ''} without a date or CPU")
    return "; ".join(parts) + "." if parts else ""


#: optional packages -> the extra of pyproject.toml that installs them
EXTRAS = {"datasets": "online"}


def require(module: str, purpose: str) -> Any:
    """Import an optional package, or stop with the extra that installs it.

    >>> require("json", "tests").dumps(1)
    '1'
    >>> require("no_such_package_xyz", "the hub path")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    paraamr.errors.MissingDependencyError: the hub path needs no_such_package_xyz: ...
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module)
        how = (f"install paraamr[{extra}] (pip install 'paraamr[{extra}]', or make setup ONLINE=1)"
               if extra else f"pip install {module}")  # fmt: skip
        raise MissingDependencyError(f"{purpose} needs {module}: {how}") from None
