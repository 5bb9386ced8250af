"""Training pairs for syntactically controlled paraphrasing, from any corpus the project reads.

A pair is ``(source, target, source parse, target parse)``; the target parse is the parse of the
paraphrase (word-free, :func:`paraamr.scpn.formats.linearize`) from a parser backend of
:mod:`paraamr.parsers` (``gold`` takes the records' ``text_parse`` / ``para_parse``). Each
distinct sentence is parsed once; with ``cache`` the parses are kept in a JSON-lines file and
reused by later runs (another seed, another format).

Selection, per source record in file order (the paper preset follows the authors' own
preparation script, which writes ``paranmt_out5.scpn``):

1. perplexity filter (:func:`paraamr.corpus.filters.passes_perplexity`; paper: 85);
2. the paraphrases are shuffled (seeded) and the first ``max_paraphrases`` kept (paper: 5);
3. the last ``dev_sources`` sources (paper: 5,000) are the dev set, the others training;
4. each *training* source also gets an identity pair (source -> source with its own parse),
   written before its paraphrases; dev sources get none;
5. pairs whose source or target cannot be parsed are dropped and counted (the authors drop a
   source whose parse fails and each paraphrase whose parse fails);
6. optionally each (source, paraphrase) pair is also used reversed (``both_directions``).

>>> from paraamr.corpus.records import Paraphrase, SourceRecord
>>> recs = [SourceRecord(f"s{i}", (Paraphrase(f"p{i}a"), Paraphrase(f"p{i}b"))) for i in range(3)]
>>> train, dev = select_pairs(recs, max_paraphrases=1, dev_sources=1, seed=0)
>>> [(p.source, p.target) for p in train], [(p.source, p.target) for p in dev]
([('s0', 's0'), ('s0', 'p0a'), ('s1', 's1'), ('s1', 'p1a')], [('s2', 'p2b')])
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.filters import passes_perplexity
from paraamr.corpus.readers import read_corpus
from paraamr.corpus.records import SourceRecord
from paraamr.errors import ConfigError, ParaAMRError, TreeError
from paraamr.jsonl_cache import JsonlCache
from paraamr.scpn.formats import linearize
from paraamr.utils import json_lines

__all__ = [
    "TrainPair",
    "PairSet",
    "ParseCache",
    "select_pairs",
    "attach_parses",
    "build_pairs",
    "pool_pairs",
    "write_pairs",
    "read_pairs",
]

log = logging.getLogger(__name__)


class TrainPair(NamedTuple):
    """One example; parses are word-free bracket strings (``None`` until parsed);
    ``target_tree`` is the target's parse *with* its words (the answer of template infilling,
    :mod:`paraamr.scpn.infill`)."""

    source: str
    target: str
    source_parse: str | None = None
    target_parse: str | None = None
    target_tree: str | None = None


@dataclass
class PairSet:
    """Training and dev pairs with the counts of how they were made."""

    train: list[TrainPair]
    dev: list[TrainPair]
    stats: Counter = field(default_factory=Counter)
    parser: str = "none"


def select_pairs(
    records: Iterable[SourceRecord],
    *,
    max_perplexity: float | None = None,
    max_paraphrases: int | None = 5,
    identity: bool = True,
    dev_sources: int = 5000,
    both_directions: bool = False,
    seed: int = 0,
    stats: Counter | None = None,
) -> tuple[list[TrainPair], list[TrainPair]]:
    """Steps 1-4 and 6 of the module docstring; gold parses (if any) ride along.

    Raises:
        ConfigError: ``dev_sources`` leaves no training source.
        ParaAMRError: no paraphrase survived the filters.
    """
    stats = stats if stats is not None else Counter()
    rng = random.Random(seed)
    chosen: list[tuple[SourceRecord, list]] = []
    for rec in records:
        stats["sources"] += 1
        kept = []
        for p in rec.paraphrases:
            stats["paraphrases"] += 1
            if passes_perplexity(p.perplexity, max_perplexity, stats):
                kept.append(p)
        rng.shuffle(kept)
        if max_paraphrases is not None and len(kept) > max_paraphrases:
            stats["dropped_cap"] += len(kept) - max_paraphrases
            kept = kept[:max_paraphrases]
        if not kept:
            stats["sources_without_paraphrase"] += 1
        chosen.append((rec, kept))
    if dev_sources < 0 or dev_sources >= len(chosen):
        raise ConfigError(
            f"data.dev_sources={dev_sources} must be in [0, {len(chosen)}) (the corpus has "
            f"{len(chosen)} sources)"
        )
    if not any(kept for _, kept in chosen):
        hint = "; the corpus has no perplexities: set max_perplexity=null" * bool(
            stats["dropped_no_perplexity"]
        )
        raise ParaAMRError(f"no (source, paraphrase) pair survived the filters{hint}")
    split = len(chosen) - dev_sources
    train: list[TrainPair] = []
    dev: list[TrainPair] = []
    for k, (rec, kept) in enumerate(chosen):
        out = train if k < split else dev
        if identity and k < split:
            out.append(TrainPair(rec.text, rec.text, rec.parse, rec.parse))
        for p in kept:
            out.append(TrainPair(rec.text, p.text, rec.parse, p.parse))
            if both_directions:
                out.append(TrainPair(p.text, rec.text, p.parse, rec.parse))
    return train, dev


class ParseCache:
    """Sentence -> word-free parse and parse with words (or the parser's error message),
    optionally on disk.

    The file is JSON lines ``{"text", "parse", "tree"}`` or ``{"text", "error"}``, appended as
    new sentences are parsed, and stamped with the parser's signature on its first line; a cache
    written by another parser is refused. Rows of older caches without ``tree`` count as not
    cached: their sentences are parsed again and appended (the later row wins).
    """

    def __init__(self, path: str | os.PathLike | None, parser_signature: str) -> None:
        self.path = Path(path) if path else None
        self.signature = parser_signature
        self.parses: dict[str, str] = {}
        self.trees: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.file = None if self.path is None else JsonlCache(self.path, parser_signature, "parser")
        if self.file is not None:
            try:
                for row in self.file.rows():
                    if "parse" in row:
                        self.parses[row["text"]] = row["parse"]
                        if "tree" in row:
                            self.trees[row["text"]] = row["tree"]
                    elif "error" in row:
                        self.errors[row["text"]] = row["error"]
            except ConfigError as e:
                raise ConfigError(f"data.parse_cache: {e}") from None

    def __contains__(self, text: str) -> bool:
        return text in self.trees or text in self.errors

    def add(self, rows: dict[str, str | Exception]) -> None:
        """Store new results (a :class:`~paraamr.parsers.base.Parsed` or tree string with
        words, or an exception)."""
        new = []
        for text, res in rows.items():
            if isinstance(res, Exception):
                self.errors[text] = str(res)
                new.append({"text": text, "error": str(res)})
                continue
            try:
                tree = getattr(res, "tree", res)
                self.parses[text] = linearize(tree)
                self.trees[text] = tree
                new.append({"text": text, "parse": self.parses[text], "tree": tree})
            except TreeError as e:
                self.errors[text] = f"unreadable parse: {e}"
                new.append({"text": text, "error": self.errors[text]})
        if self.file is not None:
            self.file.append(new)


def attach_parses(
    pairs: Sequence[TrainPair],
    parser: Any,
    *,
    cache: ParseCache | None = None,
    batch_size: int = 256,
    stats: Counter | None = None,
) -> list[TrainPair]:
    """Parse every distinct sentence once (``parser=gold``: the records' own trees) and drop,
    counting them, the pairs with a side that could not be parsed."""
    from paraamr.parsers.base import parse_unique

    stats = stats if stats is not None else Counter()
    if getattr(parser, "name", "") == "gold":
        out = []
        for p in pairs:
            try:
                sp = linearize(p.source_parse) if p.source_parse else None
                tp = linearize(p.target_parse) if p.target_parse else None
            except TreeError:
                sp = tp = None
            if sp is None or tp is None:
                stats["dropped_unparsed"] += 1
                continue
            out.append(TrainPair(p.source, p.target, sp, tp, p.target_parse))
        return out
    cache = cache if cache is not None else ParseCache(None, parser.signature())
    todo = [s for p in pairs for s in (p.source, p.target) if s not in cache]
    if todo:
        cache.add(parse_unique(todo, parser, batch_size=batch_size))
    stats["parsed_sentences"] += len(set(todo))
    out = []
    for p in pairs:
        sp, tp = cache.parses.get(p.source), cache.parses.get(p.target)
        if sp is None:
            stats["dropped_source_unparsed"] += 1
        elif tp is None:
            stats["dropped_target_unparsed"] += 1
        else:
            out.append(TrainPair(p.source, p.target, sp, tp, cache.trees.get(p.target)))
    return out


def build_pairs(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    parser: Any,
    max_perplexity: float | None = None,
    max_paraphrases: int | None = 5,
    identity: bool = True,
    dev_sources: int = 5000,
    both_directions: bool = False,
    limit_sources: int | None = None,
    parse_cache: str | os.PathLike | None = None,
    on_error: str = "raise",
    seed: int = 0,
) -> PairSet:
    """Read a corpus, select pairs (:func:`select_pairs`), parse them (:func:`attach_parses`).

    Args:
        path: a corpus file (directory for the ParaBank-Eval formats).
        fmt: a :data:`paraamr.corpus.FORMATS` name (guessed from the extension when ``None``;
            ``pan-train`` for the positive pairs of the PAN training split).
        parser: a parser backend (:func:`paraamr.parsers.base.make_parser`).
        limit_sources: read only the first N source records (quick runs).
        parse_cache: a JSON-lines file of parses kept between runs (``None``: in memory).
        on_error: ``raise`` at the first bad record (file:line), or ``skip`` and count.
        Others: see :func:`select_pairs`.
    """
    from itertools import islice

    skips = SkipLog(on_error)
    stats: Counter = Counter()
    records = read_corpus(path, fmt, skips)
    if limit_sources is not None:
        records = islice(records, limit_sources)
    train, dev = select_pairs(
        records,
        max_perplexity=max_perplexity,
        max_paraphrases=max_paraphrases,
        identity=identity,
        dev_sources=dev_sources,
        both_directions=both_directions,
        seed=seed,
        stats=stats,
    )
    cache = None if parser.name == "gold" else ParseCache(parse_cache, parser.signature())
    train = attach_parses(train, parser, cache=cache, stats=stats)
    dev = attach_parses(dev, parser, cache=cache, stats=stats)
    if skips.total:
        stats.update({f"skip:{k}": v for k, v in skips.counts.items()})
    stats["train_pairs"], stats["dev_pairs"] = len(train), len(dev)
    if not train or not dev:
        raise ParaAMRError(f"{path}: no training or no dev pair left after parsing: {dict(stats)}")
    log.info("%s: %s", path, dict(stats))
    return PairSet(train, dev, stats, parser.signature())


def pool_pairs(parts: Sequence[tuple[str, PairSet]]) -> PairSet:
    """Several corpora's pairs as one set (``data.path`` a list): training pairs concatenated
    (the data module shuffles them), dev pairs interleaved corpus by corpus so that a
    ``limit_dev`` prefix holds every corpus; the counts are summed and also kept per corpus
    under ``"<name>:<count>"``.

    Raises:
        ConfigError: no part, or parts parsed by different parsers.

    >>> a = PairSet([TrainPair("a", "A")], [TrainPair("a1", "A1"), TrainPair("a2", "A2")],
    ...             Counter(train_pairs=1, dev_pairs=2), "spacy")
    >>> b = PairSet([TrainPair("b", "B")], [TrainPair("b1", "B1")],
    ...             Counter(train_pairs=1, dev_pairs=1), "spacy")
    >>> pooled = pool_pairs([("qa", a), ("msrp", b)])
    >>> [p.source for p in pooled.train], [p.source for p in pooled.dev]
    (['a', 'b'], ['a1', 'b1', 'a2'])
    >>> pooled.stats["train_pairs"], pooled.stats["msrp:dev_pairs"]
    (2, 1)
    """
    from itertools import zip_longest

    if not parts:
        raise ConfigError("pool_pairs: no corpus to pool")
    parsers = sorted({ps.parser for _, ps in parts})
    if len(parsers) > 1:
        raise ConfigError(f"pool_pairs: the corpora were parsed by different parsers: {parsers}")
    stats: Counter = Counter()
    for name, ps in parts:
        stats.update(ps.stats)
        stats.update({f"{name}:{k}": v for k, v in ps.stats.items()})
    train = [p for _, ps in parts for p in ps.train]
    dev = [p for row in zip_longest(*(ps.dev for _, ps in parts)) for p in row if p is not None]
    return PairSet(train, dev, stats, parsers[0])


def write_pairs(pairs: Iterable[TrainPair], path: str | os.PathLike) -> None:
    """Write pairs as JSON lines (``source``, ``target``, ``source_parse``, ``target_parse``)."""
    with open(path, "w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p._asdict(), ensure_ascii=False) + "\n")


def read_pairs(path: str | os.PathLike) -> list[TrainPair]:
    """Read :func:`write_pairs` output."""
    return [TrainPair(**row) for _, row in json_lines(path)]
