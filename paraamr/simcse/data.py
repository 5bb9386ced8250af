"""Training triplets for supervised SimCSE and the Lightning data module that batches them.

A triplet is ``(anchor, positive, negative)``. Sources (``TRIPLET_FORMATS``):

- any corpus :func:`paraamr.corpus.read_corpus` reads (canonical ParaAMR JSON lines, ParaNMT,
  ParaBank 1/2 TSV, ``pairs`` TSV, ParaBank-Eval): ``(source, paraphrase, a random *other* source
  sentence)``, as in the ParaAMR paper (§5.1); see :func:`triplets_from_corpus` for the
  perplexity filter and the per-source cap;
- ``simcse-csv``: SimCSE's own training CSV (header ``sent0,sent1,hard_neg``);
- ``pairs``: plain ``s1<TAB>s2`` lines, the negative drawn at random from the other lines.

Everything is deterministic given the seed and the input file.

>>> import os, tempfile
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.tsv")
>>> _ = open(p, "w").write("A cat.\\tOne cat.\\nA dog.\\tOne dog.\\n")
>>> [tuple(t) for t in read_pair_tsv(p, seed=0)]
[('A cat.', 'One cat.', 'A dog.'), ('A dog.', 'One dog.', 'A cat.')]
"""

from __future__ import annotations

import csv
import logging
import os
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import torch

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.filters import passes_perplexity
from paraamr.corpus.readers import FORMATS, guess_format, read_corpus
from paraamr.errors import CorpusFormatError, DataNotFoundError, ParaAMRError
from paraamr.training.data import ResumableDataModule

__all__ = [
    "TRIPLET_FORMATS",
    "Triplet",
    "triplets_from_corpus",
    "read_simcse_csv",
    "read_pair_tsv",
    "load_triplets",
    "TripletCollator",
    "SimCSEDataModule",
]

log = logging.getLogger(__name__)

TRIPLET_FORMATS = (*FORMATS, "simcse-csv")


class Triplet(NamedTuple):
    """One supervised SimCSE example."""

    anchor: str
    positive: str
    negative: str


def _other_index(rng: random.Random, texts: Sequence[str], i: int, tries: int = 20) -> int:
    """A random index ``j != i`` whose text differs from ``texts[i]`` (falls back to ``j != i``)."""
    n = len(texts)
    j = i
    for _ in range(tries):
        j = rng.randrange(n - 1)
        j += j >= i  # uniform over the other n - 1 indices
        if texts[j] != texts[i]:
            return j
    return j


def _attach_negatives(
    pairs: Sequence[tuple[int, str]], anchors: Sequence[str], rng: random.Random, what: str
) -> list[Triplet]:
    """``(anchor index, positive)`` pairs -> triplets whose negative is another anchor."""
    if len(set(anchors)) < 2:
        raise ParaAMRError(
            f"{what}: need at least 2 distinct source sentences to draw negatives from, "
            f"got {len(set(anchors))}"
        )
    return [Triplet(anchors[i], pos, anchors[_other_index(rng, anchors, i)]) for i, pos in pairs]


def triplets_from_corpus(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    max_perplexity: float | None = None,
    max_paraphrases_per_source: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    skips: SkipLog | None = None,
    stats: Counter | None = None,
) -> list[Triplet]:
    """Triplets ``(source, paraphrase, random other source)`` from a paraphrase corpus.

    Per source record, in file order:

    1. perplexity filter (:func:`paraamr.corpus.filters.passes_perplexity`): with
       ``max_perplexity`` set, a paraphrase is kept only when it carries a perplexity
       ``<= max_perplexity``; paraphrases *without* a perplexity (e.g. a TSV corpus) are dropped
       and counted under ``stats["dropped_no_perplexity"]`` (a warning says so).
    2. cap: with ``max_paraphrases_per_source`` set, at most that many of the surviving
       paraphrases are kept, drawn at random (seeded), file order preserved.
    3. the negative of each triplet is the source sentence of a uniformly drawn *other* record
       (with a different text when possible), drawn after reading, so ``limit`` does not change
       which records can serve as negatives beyond those read.

    Args:
        path: corpus file (directory for the ParaBank-Eval formats).
        fmt: a :data:`paraamr.corpus.FORMATS` name; guessed from the extension when ``None``.
        max_perplexity: the paper uses 110 for SimCSE; ``None`` disables the filter.
        max_paraphrases_per_source: cap per source; ``None`` keeps all.
        limit: stop once this many triplets are collected (a quick look); ``None``: all.
        seed: seeds the cap sampling and the negatives.
        skips: bad-record policy passed to the reader (default: raise with file and line).
        stats: when given, filled with counts (``sources``, ``paraphrases``,
            ``dropped_perplexity``, ``dropped_no_perplexity``, ``dropped_cap``,
            ``sources_without_paraphrase``, ``triplets``).

    Raises:
        ParaAMRError: when no triplet survives, or fewer than 2 distinct sources were read.
    """
    rng = random.Random(seed)
    stats = stats if stats is not None else Counter()
    anchors: list[str] = []
    pairs: list[tuple[int, str]] = []
    for rec in read_corpus(path, fmt, skips):
        if limit is not None and len(pairs) >= limit:
            break
        stats["sources"] += 1
        kept = []
        for p in rec.paraphrases:
            stats["paraphrases"] += 1
            if passes_perplexity(p.perplexity, max_perplexity, stats):
                kept.append(p.text)
        if max_paraphrases_per_source is not None and len(kept) > max_paraphrases_per_source:
            chosen = sorted(rng.sample(range(len(kept)), max_paraphrases_per_source))
            stats["dropped_cap"] += len(kept) - len(chosen)
            kept = [kept[k] for k in chosen]
        if limit is not None:
            kept = kept[: limit - len(pairs)]
        idx = len(anchors)
        anchors.append(rec.text)  # every source can be a negative, even one with no paraphrase
        if not kept:
            stats["sources_without_paraphrase"] += 1
        pairs.extend((idx, t) for t in kept)
    if stats["dropped_no_perplexity"]:
        log.warning(
            "%s: dropped %d paraphrases without a perplexity because max_perplexity=%s "
            "(set max_perplexity=null to keep them)",
            path,
            stats["dropped_no_perplexity"],
            max_perplexity,
        )
    if not pairs:
        hint = ""
        if stats["dropped_no_perplexity"]:
            hint = "; the corpus has no perplexities: set max_perplexity=null"
        raise ParaAMRError(f"{path}: no (source, paraphrase) pair survived the filters{hint}")
    out = _attach_negatives(pairs, anchors, rng, str(path))
    stats["triplets"] = len(out)
    log.info("%s: %s", path, dict(stats))
    return out


def read_simcse_csv(
    path: str | os.PathLike,
    skips: SkipLog | None = None,
    seed: int = 0,
    limit: int | None = None,
) -> list[Triplet]:
    """Read SimCSE's training CSV (header ``sent0,sent1,hard_neg``; extra columns ignored).

    Without a ``hard_neg`` column the negative is the ``sent0`` of a random other row (seeded).
    A row with a missing or empty field is a bad row: ``skips`` raises
    :class:`~paraamr.errors.CorpusFormatError` with file and line (default) or counts it.

    Args:
        path: the CSV file (UTF-8, optional BOM).
        skips: bad-row policy and counter; default raises on the first bad row.
        seed: seeds the negatives when there is no ``hard_neg`` column.
        limit: keep only the first ``limit`` good rows.
    """
    skips = skips if skips is not None else SkipLog("raise")
    path = str(path)
    if not os.path.isfile(path):
        raise DataNotFoundError(f"SimCSE CSV {path} does not exist")
    rows: list[tuple[str, str, str | None]] = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise CorpusFormatError("empty file, expected a header sent0,sent1[,hard_neg]", path, 1)
        cols = {name.strip(): k for k, name in enumerate(header)}
        if "sent0" not in cols or "sent1" not in cols:
            raise CorpusFormatError(
                f"header must name sent0 and sent1 (and optionally hard_neg), got {header}", path, 1
            )
        wanted = ["sent0", "sent1"] + (["hard_neg"] if "hard_neg" in cols else [])
        start = reader.line_num + 1
        for row in reader:
            line, start = start, reader.line_num + 1  # a quoted field may span lines
            if not any(c.strip() for c in row):
                continue
            if limit is not None and len(rows) >= limit:
                break
            vals = [row[cols[w]].strip() if cols[w] < len(row) else None for w in wanted]
            bad = [w for w, v in zip(wanted, vals, strict=True) if v is None]
            if bad:
                skips.skip(f"missing field {bad[0]}", path, line)
                continue
            bad = [w for w, v in zip(wanted, vals, strict=True) if not v]
            if bad:
                skips.skip(f"empty field {bad[0]}", path, line)
                continue
            rows.append((vals[0], vals[1], vals[2] if len(vals) == 3 else None))
    if not rows:
        raise ParaAMRError(f"{path}: no usable row")
    if "hard_neg" in cols:
        return [Triplet(a, p, n) for a, p, n in rows]
    anchors = [a for a, _, _ in rows]
    return _attach_negatives(
        [(i, p) for i, (_, p, _) in enumerate(rows)], anchors, random.Random(seed), path
    )


def read_pair_tsv(
    path: str | os.PathLike,
    skips: SkipLog | None = None,
    seed: int = 0,
    limit: int | None = None,
) -> list[Triplet]:
    """Plain ``s1<TAB>s2`` pairs; the negative is the ``s1`` of a random other line (seeded).

    This is :func:`triplets_from_corpus` with the ``pairs`` reader and no perplexity filter, so
    bad lines (wrong column count, empty side) follow ``skips`` with file and line.
    """
    return triplets_from_corpus(
        path, "pairs", max_perplexity=None, limit=limit, seed=seed, skips=skips
    )


def load_triplets(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    max_perplexity: float | None = None,
    max_paraphrases_per_source: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    on_error: str = "raise",
) -> list[Triplet]:
    """Dispatch on ``fmt`` (one of :data:`TRIPLET_FORMATS`; ``.csv`` files default to
    ``simcse-csv``, others as :func:`paraamr.corpus.guess_format`). Every corpus format, the
    guessed ``pairs`` of a ``.tsv`` included, goes through :func:`triplets_from_corpus`, so the
    perplexity filter and ``max_paraphrases_per_source`` apply to all of them alike."""
    skips = SkipLog(on_error)
    if fmt is None:  # decide once, so a guessed format takes the same branch as a given one
        fmt = "simcse-csv" if str(path).lower().endswith(".csv") else guess_format(path)
    if fmt == "simcse-csv":
        out = read_simcse_csv(path, skips, seed=seed, limit=limit)
    elif fmt in FORMATS:  # ``pairs`` too: its consecutive lines of one source are one record
        out = triplets_from_corpus(
            path,
            fmt,
            max_perplexity=max_perplexity,
            max_paraphrases_per_source=max_paraphrases_per_source,
            limit=limit,
            seed=seed,
            skips=skips,
        )
    else:
        raise CorpusFormatError(f"unknown triplet format {fmt!r}; known: {TRIPLET_FORMATS}")
    if skips.total:
        log.warning("%s: skipped %d bad rows: %s", path, skips.total, skips.summary())
    return out


class TripletCollator:
    """Tokenize a list of triplets into one ``(3B, L)`` batch: anchors, positives, negatives.

    Args:
        tokenizer: a Hugging Face tokenizer.
        max_seq_length: truncation length (SimCSE: 32).
    """

    def __init__(self, tokenizer: Any, max_seq_length: int = 32) -> None:
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    def __call__(self, batch: Sequence[Triplet]) -> dict[str, torch.Tensor]:
        texts = [t.anchor for t in batch] + [t.positive for t in batch]
        texts += [t.negative for t in batch]
        return dict(
            self.tokenizer(
                texts,
                padding=True,
                truncation=True,
                max_length=self.max_seq_length,
                return_tensors="pt",
            )
        )


class SimCSEDataModule(ResumableDataModule):
    """Shuffled, seeded batches of tokenized triplets, resumable mid-epoch
    (:class:`paraamr.training.data.ResumableDataModule`).

    A batch is a dict of ``(3B, L)`` tensors (rows ``0..B-1`` anchors, ``B..2B-1`` positives,
    ``2B..3B-1`` negatives).

    Args:
        triplets: the training examples.
        tokenizer: a tokenizer name/path (loaded with ``AutoTokenizer``) or a tokenizer object.
        max_seq_length: truncation length.
        batch_size: triplets per batch and device.
        seed: seeds the shuffling.
        num_workers: data-loader worker processes.
        drop_last: drop a last incomplete batch.
    """

    def __init__(
        self,
        triplets: Iterable[Triplet],
        tokenizer: str | os.PathLike | Any,
        max_seq_length: int = 32,
        batch_size: int = 64,
        seed: int = 0,
        num_workers: int = 0,
        drop_last: bool = False,
    ) -> None:
        triplets = [Triplet(*t) for t in triplets]
        if not triplets:
            raise ParaAMRError("SimCSEDataModule needs at least one triplet")
        if isinstance(tokenizer, (str, os.PathLike)):
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))
        super().__init__(
            triplets,
            TripletCollator(tokenizer, max_seq_length),
            batch_size=batch_size,
            seed=seed,
            num_workers=num_workers,
            drop_last=drop_last,
        )
        self.triplets = self.examples
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    @classmethod
    def from_corpus(
        cls,
        path: str | os.PathLike,
        format: str | None = None,  # noqa: A002 - the config key
        *,
        tokenizer: str | os.PathLike | Any,
        max_perplexity: float | None = None,
        max_paraphrases_per_source: int | None = None,
        limit: int | None = None,
        on_error: str = "raise",
        max_seq_length: int = 32,
        batch_size: int = 64,
        seed: int = 0,
        num_workers: int = 0,
    ) -> SimCSEDataModule:
        """Read triplets with :func:`load_triplets` (the ``data/simcse.yaml`` config)."""
        triplets = load_triplets(
            path,
            format,
            max_perplexity=max_perplexity,
            max_paraphrases_per_source=max_paraphrases_per_source,
            limit=limit,
            seed=seed,
            on_error=on_error,
        )
        return cls(triplets, tokenizer, max_seq_length, batch_size, seed, num_workers)
