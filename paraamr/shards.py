"""One crash-safe, resumable shard runner for every long job: Table 2 scoring, the corpus builder,
and the batch generation / filtering stages that follow.

A job is a stream of items and a function that turns a chunk of items into rows for one or more
output *streams* (``records`` and ``rejects``; ``pairs`` and ``sources``) plus counts. Item ``k``
(0-based position, or a position the caller gives) belongs to shard ``k % num_shards``, so a job
array covers the input exactly once.

Files of shard ``i`` of ``n`` under ``out_dir`` (``name = shard-0000i-of-0000n``)::

    <name>.<stream>.jsonl.partial    while the shard runs
    <name>.<stream>.jsonl            once it finished
    <name>.progress.json             chunks done, each stream's size, counts, settings, done

Contract (tested state by state in ``tests/test_shards.py``):

1. Each chunk's rows are appended to every stream's ``.partial`` and fsynced; then the progress
   record is replaced atomically (write, fsync, rename, fsync the directory). A restart truncates
   each stream to its recorded size and skips the recorded chunks, so a job killed at any moment
   and restarted writes byte for byte what an uninterrupted job writes.
2. Finishing renames every ``.partial`` to its final name, then records ``done``. A restart in any
   intermediate state finishes again: a stream's data is in its ``.partial`` if that exists, else
   in its final file (an interrupted finish is undone, then redone). A file shorter than its
   recorded size is an error, never padded.
3. A shard refuses to resume with other settings; a merge refuses missing or unfinished shards,
   mixed shard counts and shards run with different settings, and joins the rows of all shards
   in input order (the order key each row carries).

Examples:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> double = lambda chunk: ChunkOutput({"rows": [{"k": k, "x": 2 * x} for k, x in chunk]})
    >>> items = list(enumerate([5, 6, 7]))
    >>> for i in (0, 1):
    ...     _ = run_shard(Shard(i, 2).select(items), double, out, shard=Shard(i, 2),
    ...                   streams=("rows",), settings={"f": "double"}, chunk_size=1, progress=False)
    >>> [r["x"] for r in merged_rows(out, "rows", order_key="k")]
    [10, 12, 14]
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from paraamr.errors import ParaAMRError
from paraamr.utils import fsync_dir, write_json_atomic

__all__ = [
    "Shard",
    "ChunkOutput",
    "ShardError",
    "run_shard",
    "shard_states",
    "merged_rows",
    "merge_streams",
    "stream_path",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Test hook: called with the name of each crash-sensitive point (``after_append``,
#: ``after_progress``, ``before_finish``, ``after_rename:<stream>``); raising there leaves the
#: files exactly as a process killed at that point would.
FAULT: Callable[[str], None] | None = None


class ShardError(ParaAMRError):
    """A shard cannot run or merge as asked (other settings, missing shards, corrupted files)."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``.

    Examples:
        >>> Shard(2, 64).name
        'shard-00002-of-00064'
        >>> [x for x in Shard(1, 3).select(range(8))]
        [1, 4, 7]
    """

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ShardError(f"shard must be in [0, {self.count}), got {self.index}")

    @property
    def name(self) -> str:
        return f"shard-{self.index:05d}-of-{self.count:05d}"

    def owns(self, position: int) -> bool:
        return position % self.count == self.index

    def select(
        self, items: Iterable[T], position: Callable[[int, T], int] | None = None
    ) -> Iterator[T]:
        """The items of this shard; ``position(k, item)`` defaults to the stream position ``k``."""
        for k, it in enumerate(items):
            if self.owns(k if position is None else position(k, it)):
                yield it


@dataclass
class ChunkOutput:
    """What processing one chunk produced: rows per stream and counts to add up."""

    rows: dict[str, list[dict]]
    counts: Counter = field(default_factory=Counter)


def stream_path(out_dir: str | os.PathLike, shard: Shard, stream: str) -> Path:
    """The finished file of one stream of one shard."""
    return Path(out_dir) / f"{shard.name}.{stream}.jsonl"


def _fault(point: str) -> None:
    if FAULT is not None:
        FAULT(point)


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _append(path: Path, rows: Sequence[dict]) -> int:
    with open(path, "ab") as fh:
        for r in rows:
            fh.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
        return fh.tell()


def _normalised(obj: Any) -> Any:
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def _open_stream(final: Path, recorded: int) -> Path:
    """Return the ``.partial`` of a stream holding exactly ``recorded`` bytes of its data."""
    part = _partial(final)
    if not part.exists():
        if final.exists():  # an interrupted finish renamed it already: undo, finish again later
            os.replace(final, part)
            fsync_dir(part.parent)
        elif recorded:
            raise ShardError(
                f"{part} is missing but its progress record says {recorded} bytes were written: "
                "remove the shard's files to rebuild it"
            )
        else:
            part.touch()
    size = part.stat().st_size
    if size < recorded:
        raise ShardError(
            f"{part} has {size} bytes, fewer than the {recorded} its progress record says were "
            "written (the file was changed or lost): remove the shard's files to rebuild it"
        )
    if size > recorded:  # a chunk appended after the last progress write: drop it, redo it
        with open(part, "r+b") as fh:
            fh.truncate(recorded)
            os.fsync(fh.fileno())
    return part


def run_shard(
    items: Iterable[T],
    process: Callable[[list[T]], ChunkOutput],
    out_dir: str | os.PathLike,
    *,
    shard: Shard,
    streams: Sequence[str],
    settings: dict,
    chunk_size: int,
    total: int | None = None,
    desc: str = "",
    unit: str = "item",
    progress: bool = True,
    postfix: Callable[[], dict] | None = None,
    skips: Any = None,
) -> dict:
    """Run (or resume, or just finish) one shard; returns its progress record.

    Args:
        items: this shard's items (already selected with :meth:`Shard.select`), in input order.
        process: chunk -> :class:`ChunkOutput` with a list of rows for every name in ``streams``.
        out_dir: where the shard's files go.
        shard: which shard this is (names the files, checked against an existing record).
        streams: output stream names.
        settings: everything that changes the output (JSON-serialisable); a shard refuses to
            resume under other settings.
        chunk_size: items per chunk (one resume step).
        total: items this shard will see, for the progress bar's ETA.
        postfix: a function giving extra progress-bar fields (e.g. per-stage rates).
        skips: a :class:`~paraamr.corpus.errors.SkipLog` shared with the item reader: the skips
            recorded while a chunk is read and processed are stored with that chunk's counts
            (``skip:<reason>``), so a resumed shard reports each skip exactly once.

    Returns:
        ``{"shard", "num_shards", "chunks_done", "sizes", "counts", "settings", "done"}``.
    """
    from tqdm.auto import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prog_path = out / f"{shard.name}.progress.json"
    finals = {s: stream_path(out, shard, s) for s in streams}
    settings = _normalised(settings)
    state: dict[str, Any] = {
        "shard": shard.index,
        "num_shards": shard.count,
        "chunks_done": 0,
        "sizes": {s: 0 for s in streams},
        "counts": {},
        "tail_counts": {},
        "settings": settings,
        "done": False,
    }
    if prog_path.exists():
        try:
            old = json.loads(prog_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ShardError(f"{prog_path} is unreadable ({e}): remove the shard's files") from e
        if old.get("settings") != settings:
            raise ShardError(
                f"{prog_path} was written with other settings; remove the shard's files to "
                f"rebuild it (recorded: {old.get('settings')}, now: {settings})"
            )
        state = old
        if state["done"] and all(f.exists() and not _partial(f).exists() for f in finals.values()):
            log.info("%s already complete", shard.name)
            return state
    parts = {s: _open_stream(finals[s], state["sizes"][s]) for s in streams}
    if not state["done"]:
        _run_chunks(items, process, parts, prog_path, state, chunk_size, skips, total, desc, unit,
                    progress, postfix, tqdm)  # fmt: skip
    _finish(parts, finals, prog_path, state)
    return state


def _skip_counts(skips: Any) -> Counter:
    return Counter() if skips is None else Counter(skips.counts)


def _run_chunks(items, process, parts, prog_path, state, chunk_size, skips, total, desc, unit,
                progress, postfix, tqdm) -> None:  # fmt: skip
    counts = Counter(state["counts"])
    bar = tqdm(desc=desc, unit=unit, total=total, disable=not progress, initial=counts["items"])
    it = iter(items)
    with bar:
        k = 0
        while True:
            before = _skip_counts(skips)
            chunk = list(islice(it, chunk_size))
            if not chunk:
                break
            if k < state["chunks_done"]:
                k += 1
                continue
            res = process(chunk)
            for s, p in parts.items():
                state["sizes"][s] = _append(p, res.rows.get(s, []))
            _fault("after_append")
            counts.update(res.counts)
            counts["items"] += len(chunk)
            counts.update({f"skip:{r}": n for r, n in (_skip_counts(skips) - before).items()})
            k += 1
            state["chunks_done"] = k
            state["counts"] = dict(counts)
            write_json_atomic(prog_path, state)
            _fault("after_progress")
            bar.update(len(chunk))
            if postfix is not None:
                bar.set_postfix(postfix(), refresh=False)
        # skips after the last item (trailing bad lines): stored once, not added on every resume
        tail = _skip_counts(skips) - before
        state["tail_counts"] = {f"skip:{r}": n for r, n in tail.items()}


def _finish(parts: dict[str, Path], finals: dict[str, Path], prog_path: Path, state: dict) -> None:
    _fault("before_finish")
    for s, part in parts.items():
        os.replace(part, finals[s])
        fsync_dir(finals[s].parent)
        _fault(f"after_rename:{s}")
    state["done"] = True
    write_json_atomic(prog_path, state)


def total_counts(state: dict) -> Counter:
    """A shard's counts including the skips seen after its last item."""
    out = Counter(state.get("counts", {}))
    out.update(state.get("tail_counts", {}))  # update, not +: keeps zero counts
    return out


_PROGRESS = re.compile(r"shard-(\d+)-of-(\d+)\.progress\.json$")


def shard_states(out_dir: str | os.PathLike, num_shards: int | None = None) -> list[dict]:
    """The progress records of every shard under ``out_dir``, checked for a merge.

    Refuses (with :class:`ShardError`) missing or unfinished shards, mixed shard counts and
    shards run with different settings.
    """
    out = Path(out_dir)
    found: dict[int, set[int]] = {}
    for p in out.glob("shard-*-of-*.progress.json"):
        m = _PROGRESS.search(p.name)
        if m:
            found.setdefault(int(m.group(2)), set()).add(int(m.group(1)))
    if not found:
        raise ShardError(f"no shards under {out}: run the shards first")
    if len(found) > 1:
        raise ShardError(f"{out} mixes shard counts {sorted(found)}: remove stale shards")
    n = next(iter(found))
    if num_shards is not None and n != num_shards:
        raise ShardError(f"{out} holds shards of {n}, not {num_shards}")
    states, missing = [], []
    for i in range(n):
        p = out / f"{Shard(i, n).name}.progress.json"
        st = json.loads(p.read_text(encoding="utf-8")) if p.exists() else None
        if st is None or not st.get("done"):
            missing.append(i)
        else:
            states.append(st)
    if missing:
        raise ShardError(f"{out}: shards {missing} of {n} are missing or unfinished")
    settings = {json.dumps(s["settings"], sort_keys=True) for s in states}
    if len(settings) > 1:
        raise ShardError(f"{out}: shards were run with different settings: {sorted(settings)}")
    return states


def _rows(path: Path, key: str) -> Iterator[tuple[Any, str]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)[key], line


def _merged_lines(out: Path, stream: str, order_key: str, n: int) -> Iterator[str]:
    files = [stream_path(out, Shard(i, n), stream) for i in range(n)]
    for _, line in heapq.merge(*(_rows(f, order_key) for f in files), key=lambda t: t[0]):
        yield line


def merged_rows(
    out_dir: str | os.PathLike, stream: str, *, order_key: str, num_shards: int | None = None
) -> Iterator[dict]:
    """The rows of one stream of all (finished, compatible) shards, in input order."""
    states = shard_states(out_dir, num_shards)
    for line in _merged_lines(Path(out_dir), stream, order_key, len(states)):
        yield json.loads(line)


def merge_streams(
    out_dir: str | os.PathLike,
    outputs: dict[str, str | os.PathLike],
    *,
    order_key: str,
    num_shards: int | None = None,
) -> Counter:
    """Join each stream of all shards into one file (``{stream: path}``), in input order, each
    written atomically; returns the summed counts of the shards."""
    states = shard_states(out_dir, num_shards)
    out = Path(out_dir)
    for stream, target in outputs.items():
        target = Path(target)
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for line in _merged_lines(out, stream, order_key, len(states)):
                fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    totals: Counter = Counter()
    for st in states:
        totals.update(total_counts(st))
    return totals
