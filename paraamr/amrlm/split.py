"""The fixed split of the gold AMR graphs of the data folder (``amr/``).

Two files: the Little Prince (``amr-bank-struct-v3.0.txt``, 1,562 graphs, ids
``lpp_1943.1`` … ``lpp_1943.1562``) and the Bio AMR dev release (``amr-release-dev-bio.txt``,
500 graphs). Each is cut in file order into contiguous parts, so neighbouring sentences of a
chapter or a paper stay on one side:

========================  =====  ===  ====
file                      train  dev  test
========================  =====  ===  ====
Little Prince             1,274  145  143
Bio                         400   50   50
========================  =====  ===  ====

The Little Prince sizes are those of the corpus's v1.6 standard split (1,274 / 145 / 143), but
the graphs are the contiguous ranges above (ids 1-1274 / 1275-1419 / 1420-1562), not that
split's lists, which are not in the data folder.

Examples:
    >>> [(p.file.split("-")[1], p.part, p.start, p.stop) for p in PARTS][:3]
    [('bank', 'train', 0, 1274), ('bank', 'dev', 1274, 1419), ('bank', 'test', 1419, 1562)]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import penman

from paraamr.amr.io import read_penman_blocks
from paraamr.errors import DataNotFoundError, InputError

__all__ = ["AMRExample", "Part", "PARTS", "SPLITS", "load_split"]

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class Part:
    """Graphs ``[start, stop)`` (0-based, file order) of ``file`` (under ``data_dir/amr``)."""

    file: str
    part: str
    start: int
    stop: int
    size: int  # the file's number of graphs (checked on load)


_LP, _BIO = "amr-bank-struct-v3.0.txt", "amr-release-dev-bio.txt"
PARTS = (
    Part(_LP, "train", 0, 1274, 1562),
    Part(_LP, "dev", 1274, 1419, 1562),
    Part(_LP, "test", 1419, 1562, 1562),
    Part(_BIO, "train", 0, 400, 500),
    Part(_BIO, "dev", 400, 450, 500),
    Part(_BIO, "test", 450, 500, 500),
)


@dataclass(frozen=True)
class AMRExample:
    """One gold graph: its id, sentence (``# ::snt``), graph and where it came from."""

    id: str
    sentence: str
    graph: penman.Graph
    file: str
    line: int


def load_split(data_dir: str | Path, part: str, limit: int | None = None) -> list[AMRExample]:
    """The examples of ``part`` (``train``, ``dev`` or ``test``) over both files, Little Prince
    first; ``limit``: the first N of each file's part.

    Raises:
        DataNotFoundError: a file is missing.
        InputError: a file holds another number of graphs than the split was made for, or a
            graph without ``# ::snt``.
    """
    if part not in SPLITS:
        raise InputError(f"AMR split part must be one of {SPLITS}, got {part!r}")
    out: list[AMRExample] = []
    for p in (x for x in PARTS if x.part == part):
        path = Path(data_dir) / "amr" / p.file
        if not path.is_file():
            raise DataNotFoundError(f"{path}: gold AMR graphs not found (set paths.data_dir=)")
        blocks = [b for b in read_penman_blocks(path) if b.graph is not None or b.error]
        if len(blocks) != p.size:
            raise InputError(f"{path}: {len(blocks)} graphs, the split expects {p.size}")
        chosen = blocks[p.start : p.stop][:limit]
        for b in chosen:
            if b.graph is None:
                raise b.error
            snt = b.graph.metadata.get("snt")
            if not snt:
                raise InputError(f"{path}:{b.line}: graph without a '# ::snt' sentence")
            out.append(AMRExample(b.graph.metadata.get("id", f"{p.file}:{b.line}"), snt.strip(),
                                  b.graph, p.file, b.line))  # fmt: skip
    return out
