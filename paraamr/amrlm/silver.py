"""Silver training data for the AMR generator: sentences parsed by the parser trained here.

The gold split holds 1,674 training graphs of two narrow domains (a novel and biology
papers). The builder's generator, though, reads the graphs *our parser* writes for *the
user's* sentences. Self-training on silver data (Konstas et al. 2017, "Neural AMR") closes
that gap: parse unlabeled sentences of the target domain with the trained parser
(``paraamr amr parse``) and add each ``(silver graph, sentence)`` pair to the generator's
training pairs (``data.silver=FILE`` in ``conf/amr.yaml``). The parser is not trained on its
own output (``data.silver_directions: [generate]``, the default).

- :func:`read_silver`: the ``(sentence, graph)`` pairs of a PENMAN file with ``# ::snt`` (what
  ``paraamr amr parse`` writes, or any AMR release); placeholder graphs (a sentence the parser
  gave no graph) and blocks that do not decode are counted and left out, a graph without a
  sentence is an error naming file and line.
- :func:`select_sentences`: the sentences to parse: candidates in order, without duplicates
  (ignoring case), without the sentences of an evaluation set and without overlong ones.
- :func:`offline_candidates`: the candidates ``make amr-silver`` parses here: the first 500
  sources of ParaNMT-small's test split and the original English of the first 150 pairs of the
  ParaBank validation sample (the data folder), neither part of the sources
  ``make corpus-offline`` builds from.
- :func:`silver_sentences`: what a training run parses for itself (``data.silver_sentences``
  in ``conf/amr.yaml``): ``offline`` (the candidates above without the sentences of
  :func:`offline_exclusions`, the corpus-offline sources) or the lines of a file, selected as
  above, the first ``limit`` of them.

Examples:
    >>> select_sentences(["A b .", "a B .", "c d .", "e f g h ."], exclude=["C D ."], max_words=3)
    ['A b .']
"""

from __future__ import annotations

import csv
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import penman

from paraamr.amr.io import read_penman_blocks
from paraamr.amr.serialize import is_placeholder, states_an_edge_twice
from paraamr.errors import DataNotFoundError, InputError
from paraamr.utils import logger_level

__all__ = [
    "SilverData",
    "read_silver",
    "select_sentences",
    "offline_candidates",
    "offline_exclusions",
    "silver_sentences",
]

log = logging.getLogger(__name__)

#: where :func:`offline_candidates` reads, under the data folder, and how many of each
OFFLINE_SOURCES = (
    ("paraphrase/qqppos-paranmt-small/para/test_src.txt", 500),
    ("paraphrase/parabank-valid-sample/pairs.unbpe.tsv", 150),
)
#: the source sets ``make corpus-offline`` builds from (path under the data folder, corpus
#: format): never silver sentences, so no built source was seen with its graph in training
OFFLINE_EXCLUDED = (
    ("paraphrase/qqppos-paranmt-small/para/valid_src.txt", "src-trg"),
    ("paraphrase/parabank-eval", "parabank-eval-parabank1"),
)


@dataclass
class SilverData:
    """The usable pairs of a silver file, what was left out (reason -> count), and how many of
    the pairs' graphs state an edge twice (kept as parsed, as the builder reads them); for a
    file a training run parsed itself, its sentences (``offline:300``, a file) and how many."""

    path: str
    items: list[tuple[str, penman.Graph]]
    skipped: Counter = field(default_factory=Counter)
    repeated: int = 0
    source: str | None = None
    parsed: int | None = None

    def summary(self) -> dict:
        """``{"path", "graphs", "skipped", "repeated"}`` for a run's scores (and ``source``,
        ``parsed`` where the run parsed the file)."""
        out = {"path": self.path, "graphs": len(self.items), "skipped": dict(self.skipped),
               "repeated": self.repeated}  # fmt: skip
        if self.source is not None:
            out.update(source=self.source, parsed=self.parsed)
        return out


def read_silver(path: str | Path) -> SilverData:
    """The ``(sentence, graph)`` pairs of ``path`` (PENMAN blocks with ``# ::snt``).

    Placeholder graphs (``(e / amr-empty)``: no graph for the sentence) and blocks that do not
    decode are left out and counted in ``skipped`` (and logged); graphs that state an edge twice
    are kept and counted in ``repeated`` (one log line; penman's line per edge is silenced).

    Raises:
        DataNotFoundError: ``path`` does not exist.
        InputError: a graph has no ``# ::snt`` (``path:line``), or no graph is usable.
    """
    p = Path(path)
    if not p.is_file():
        raise DataNotFoundError(f"{p}: silver AMR file not found (make amr-silver writes one)")
    items: list[tuple[str, penman.Graph]] = []
    skipped: Counter = Counter()
    repeated = 0
    # penman warns once per edge a parsed graph states twice (hundreds of lines); counted here
    with logger_level("penman.layout", logging.ERROR):
        for block in read_penman_blocks(p):
            if block.graph is None:
                skipped["undecodable"] += 1
                continue
            if is_placeholder(block.graph):  # an empty input line's has an empty ::snt
                skipped["placeholder"] += 1
                continue
            snt = (block.graph.metadata.get("snt") or "").strip()
            if not snt:
                raise InputError(f"{p}:{block.line}: graph without a '# ::snt' sentence")
            items.append((snt, block.graph))
            repeated += states_an_edge_twice(block.graph)
    if repeated:
        log.info("%s: %d of %d graphs state an edge twice (read as parsed)", p, repeated,
                 len(items))  # fmt: skip
    if skipped:
        log.warning("%s: %d graphs left out (%s)", p, sum(skipped.values()),
                    ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))  # fmt: skip
    if not items:
        raise InputError(f"{p}: no usable graph (left out: {dict(skipped)})")
    return SilverData(str(p), items, skipped, repeated)


def select_sentences(
    candidates: Iterable[str], exclude: Iterable[str] = (), max_words: int = 40
) -> list[str]:
    """``candidates`` in order, stripped, without empty ones, repeats (ignoring case), the
    sentences of ``exclude`` (ignoring case) and those of more than ``max_words`` words."""
    seen = {s.strip().lower() for s in exclude}
    out = []
    for s in (c.strip() for c in candidates):
        key = s.lower()
        if not s or key in seen or len(s.split()) > max_words:
            continue
        seen.add(key)
        out.append(s)
    return out


def offline_candidates(data_dir: str | Path) -> list[str]:
    """The silver candidates of the data folder (see the module), in order.

    Raises:
        DataNotFoundError: a file is missing.
    """
    (nmt, n_nmt), (bank, n_bank) = OFFLINE_SOURCES
    paths = [Path(data_dir) / nmt, Path(data_dir) / bank]
    for q in paths:
        if not q.is_file():
            raise DataNotFoundError(f"{q}: not found (set --data to the data folder)")
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    out = [s for s in lines if s.strip()][:n_nmt]
    with open(paths[1], encoding="utf-8", newline="") as fh:
        rows = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        out += [r["target_original_english"] for r in rows][:n_bank]
    return out


def offline_exclusions(data_dir: str | Path) -> list[str]:
    """The source sentences of :data:`OFFLINE_EXCLUDED` (the corpus-offline sources), in order.

    Raises:
        DataNotFoundError: a source set is missing.
    """
    from paraamr.corpus.readers import read_corpus

    out = []
    for rel, fmt in OFFLINE_EXCLUDED:
        q = Path(data_dir) / rel
        if not q.exists():
            raise DataNotFoundError(f"{q}: not found (set the data folder: paths.data_dir)")
        out += [r.text for r in read_corpus(q, fmt)]
    return out


def silver_sentences(
    spec: str, data_dir: str | Path, limit: int | None = None, max_words: int = 40
) -> list[str]:
    """The sentences a training run parses into silver pairs: ``spec`` ``offline`` (the data
    folder's :func:`offline_candidates` without :func:`offline_exclusions`) or a file (one
    sentence a line), selected by :func:`select_sentences`, the first ``limit`` (all: ``None``).

    Raises:
        DataNotFoundError: the file (or a data folder file) is missing.
        InputError: nothing is left to parse.
    """
    if spec == "offline":
        chosen = select_sentences(offline_candidates(data_dir), offline_exclusions(data_dir),
                                  max_words)  # fmt: skip
    else:
        p = Path(spec)
        if not p.is_file():
            raise DataNotFoundError(f"{p}: silver sentences not found (data.silver_sentences: "
                                    "offline or a file, one sentence a line)")  # fmt: skip
        chosen = select_sentences(p.read_text(encoding="utf-8").splitlines(), (), max_words)
    chosen = chosen[:limit] if limit is not None else chosen
    if not chosen:
        raise InputError(f"{spec}: no silver sentence left (empty, repeated or over "
                         f"{max_words} words)")  # fmt: skip
    return chosen


def main(argv: list[str] | None = None) -> int:
    """``python -m paraamr.amrlm.silver --data DIR [--exclude FILE ...] [--also FILE ...]
    [--max-words N]``: the selected offline candidates, then the lines of each ``--also``
    file, on stdout, one a line; always without the sentences of :func:`offline_exclusions`
    (as a training run's ``offline`` silver), and without those of each ``--exclude`` file."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m paraamr.amrlm.silver", description=main.__doc__)
    ap.add_argument("--data", required=True, help="the data folder (../shared/data)")
    ap.add_argument("--exclude", action="append", default=[], metavar="FILE",
                    help="also leave out these sentences (one a line; repeatable); the "
                    "corpus-offline sources always are")  # fmt: skip
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="FILE",
        help="more candidates after the offline ones (one a line; repeatable)",
    )
    ap.add_argument("--max-words", type=int, default=40)
    args = ap.parse_args(argv)
    try:
        exclude = [s for f in args.exclude for s in Path(f).read_text("utf-8").splitlines()]
        also = [s for f in args.also for s in Path(f).read_text("utf-8").splitlines()]
        exclude += offline_exclusions(args.data)
        chosen = select_sentences(offline_candidates(args.data) + also, exclude, args.max_words)
    except (OSError, DataNotFoundError) as exc:
        print(f"paraamr.amrlm.silver: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write("".join(s + "\n" for s in chosen))
    print(f"{len(chosen)} sentences", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
