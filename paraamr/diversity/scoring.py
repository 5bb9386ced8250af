"""Score (source, paraphrase) pairs of a corpus on the five Table 2 metrics, chunk by chunk.

For each chunk of source records: paraphrases equal to their source (case-insensitive) are dropped
and counted; each distinct sentence is parsed once (batched) and embedded once; every pair gets
similarity, 1 - BLEU, 1 - IoU, TED-3 and TED-F; per-pair and per-source rows are streamed to disk.
With ``self_bleu=True`` each source row also gets the Self-BLEU of its scored paraphrases
(:class:`paraamr.metrics.pairwise.SelfBleu`, paraphrases in an order drawn from the source id);
every measure is one of the metric objects of :mod:`paraamr.metrics.pairwise`.

Files written to a corpus's shard directory by the shared shard runner (:mod:`paraamr.shards`):

- ``<shard>.pairs.jsonl``: one row per scored pair (raw values in [0, 1] / edit counts),
- ``<shard>.sources.jsonl``: one row per source with the means over its pairs,
- ``<shard>.progress.json``: counts, skips by reason, corpus-BLEU statistics, the signature.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paraamr.corpus.errors import SkipLog, check_on_error
from paraamr.corpus.records import SourceRecord, same_sentence
from paraamr.errors import ConfigError, ParserError
from paraamr.metrics.aggregate import source_means
from paraamr.metrics.lexical import BLEU_VARIANTS
from paraamr.metrics.pairwise import Bleu, SelfBleu, Sentence, Similarity, TokenIoU, TreeEdit
from paraamr.metrics.ted import VARIANTS
from paraamr.parsers.base import Parsed, parse_unique
from paraamr.shards import ChunkOutput, Shard, run_shard, total_counts
from paraamr.utils import available_cores, is_whole

if TYPE_CHECKING:
    from paraamr.parsers.types import ParserBackend

__all__ = [
    "MetricConfig",
    "METRICS",
    "SOURCE_METRICS",
    "STREAMS",
    "score_records",
    "shard_result",
    "ShardResult",
]

log = logging.getLogger(__name__)

METRICS = ("similarity", "one_minus_bleu", "one_minus_iou", "ted3", "tedf")
SOURCE_METRICS = ("self_bleu",)  # one value per source, present only when switched on


@dataclass(frozen=True)
class MetricConfig:
    """How pairs are scored (every field that changes a number is in the signature)."""

    bleu: str = "nltk-sentence"
    ted_variant: str = "paraamr"
    ted_kernel: str = "edist"
    ted3_depth: int = 3
    similarity_batch_size: int = 128
    parse_batch_size: int = 256
    chunk_size: int = 1000
    workers: int | str = 1  # processes for TED; "auto": the cores this process may use
    on_error: str = "raise"
    lowercase: bool = False  # lowercase tokens before BLEU and IoU (default: case as written)
    self_bleu: bool = False  # Self-BLEU among a source's paraphrases (authors' script, 5 compared)

    def __post_init__(self) -> None:
        if self.bleu not in BLEU_VARIANTS:
            raise ConfigError(f"metrics.bleu must be one of {BLEU_VARIANTS}, got {self.bleu!r}")
        if self.ted_variant not in VARIANTS:
            raise ConfigError(
                f"ted.variant must be one of {tuple(VARIANTS)}, got {self.ted_variant!r}"
            )
        if not is_whole(self.ted3_depth, 0):
            raise ConfigError(
                f"metrics.ted3_depth must be a whole number >= 0, got {self.ted3_depth!r}"
            )
        check_on_error(self.on_error)
        if self.workers == "auto":
            object.__setattr__(self, "workers", available_cores())
        if not isinstance(self.workers, int) or self.workers < 1:
            raise ConfigError(
                f"metrics.workers must be a number >= 1 or auto, got {self.workers!r}"
            )


@dataclass
class ShardResult:
    """What one scoring run produced (also written as ``summary.json``)."""

    n_records: int = 0
    n_sources: int = 0
    n_pairs: int = 0
    dropped_identical: int = 0
    skips: dict = field(default_factory=dict)
    corpus_bleu_stats: list[int] = field(default_factory=lambda: [0] * 10)
    signature: str = ""


class _PairScorer:
    def __init__(self, parser, encoder, cfg: MetricConfig, skips: SkipLog):
        self.parser, self.cfg, self.skips = parser, cfg, skips
        self.bleu = Bleu(cfg.bleu, cfg.lowercase)
        self.iou = TokenIoU(cfg.lowercase)
        self.ted = TreeEdit(cfg.ted_variant, cfg.ted3_depth, cfg.ted_kernel)
        self.similarity = Similarity(encoder, "", cfg.similarity_batch_size)
        self.self_bleu = SelfBleu(cfg.lowercase)
        self.corpus_bleu = None if self.bleu.per_pair else self.bleu.accumulator()
        self._pool = ProcessPoolExecutor(cfg.workers) if cfg.workers > 1 else None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()

    def _parses(self, records: list[SourceRecord]) -> dict:
        """``(record index, paraphrase index or None) -> Parsed | ParserError`` for a chunk.

        Gold trees come from the records; other backends parse each distinct sentence once.
        """
        if self.parser.name == "gold":
            read = self.parser.parse_tree
            return {
                (i, j): read(r.parse if j is None else r.paraphrases[j].parse)
                for i, r in enumerate(records)
                for j in (None, *range(len(r.paraphrases)))
            }
        sents = [r.text for r in records] + [p.text for r in records for p in r.paraphrases]
        by_text = parse_unique(sents, self.parser, self.cfg.parse_batch_size)
        return {
            (i, j): by_text[r.text if j is None else r.paraphrases[j].text]
            for i, r in enumerate(records)
            for j in (None, *range(len(r.paraphrases)))
        }

    def score_chunk(self, records: list[SourceRecord], first_id: int, res: ShardResult):
        """Yield (source row, pair rows) for each record of the chunk that has a scored pair."""
        table = self._parses(records)
        cand = []  # (record index, source id, paraphrase index, src Parsed, para Parsed)
        for i, r in enumerate(records):
            sid = r.index if r.index is not None else first_id + i
            src = table[i, None]
            if isinstance(src, ParserError):
                self.skips.skip(f"source not parsed: {src}", r.path, r.line)
                continue
            for j, p in enumerate(r.paraphrases):
                if same_sentence(r.text, p.text):
                    res.dropped_identical += 1
                    continue
                para = table[i, j]
                if isinstance(para, ParserError):
                    self.skips.skip(f"paraphrase {j} not parsed: {para}", r.path, r.line)
                    continue
                cand.append((i, sid, j, src, para))
        if not cand:
            return
        sims = self.similarity.cosines(
            [(records[i].text, records[i].paraphrases[j].text) for i, _, j, _, _ in cand]
        )
        teds = self.ted.cut_and_full(
            [(s.tree, p.tree) for _, _, _, s, p in cand], self._pool, self.cfg.workers
        )
        by_source: dict[int, list[dict]] = {}
        tokens: dict[int, list[list[str]]] = {}
        for (i, sid, j, src, para), sim, ted in zip(cand, sims, teds, strict=True):
            r = records[i]
            if isinstance(ted, str):
                self.skips.skip(f"paraphrase {j}: unreadable tree: {ted}", r.path, r.line)
                continue
            sim = float(sim)
            if not math.isfinite(sim):
                self.skips.skip(f"paraphrase {j}: non-finite similarity", r.path, r.line)
                continue
            row = {
                "source_id": sid,
                "source": r.text,
                "paraphrase": r.paraphrases[j].text,
                "similarity": sim,
                "one_minus_bleu": self._one_minus_bleu(src, para, r, j),
                "one_minus_iou": 1.0 - self.iou.sentence_score(para.tokens, src.tokens),
                "ted3": ted[0],
                "tedf": ted[1],
            }
            by_source.setdefault(i, []).append(row)
            tokens.setdefault(i, []).append(para.tokens)
        for i, rows in by_source.items():
            r = records[i]
            means = source_means(rows, METRICS)
            srow = {
                "source_id": rows[0]["source_id"],
                "source": r.text,
                "n_pairs": len(rows),
                **means,
            }
            if self.cfg.self_bleu:
                srow["self_bleu"] = self.self_bleu.source_score(tokens[i], srow["source_id"])
            yield srow, rows

    def _one_minus_bleu(self, src: Parsed, para: Parsed, r: SourceRecord, j: int):
        if self.bleu.per_pair:
            hyp, ref = Sentence.of(r.paraphrases[j].text, para), Sentence.of(r.text, src)
            return 1.0 - self.bleu.sentence_score(hyp, ref)
        self.bleu.add(self.corpus_bleu, r.paraphrases[j].text, r.text)
        return None  # corpus BLEU has no per-pair value


STREAMS = ("pairs", "sources")


def _with_ids(records: Iterable[SourceRecord], first_id: int) -> Iterator[SourceRecord]:
    """Give each record without a global id (``index``) its position in the stream."""
    for k, r in enumerate(records):
        if r.index is None:
            r.index = first_id + k
        yield r


def score_records(
    records: Iterable[SourceRecord],
    *,
    parser: ParserBackend,
    encoder: Any,
    cfg: MetricConfig,
    out_dir: str | os.PathLike,
    shard: Shard | None = None,
    signature: str = "",
    skips: SkipLog | None = None,
    progress: bool = False,
    total: int | None = None,
    desc: str = "score",
    first_id: int = 0,
) -> ShardResult:
    """Score a stream of records into one shard of ``out_dir`` through the shared shard runner
    (:mod:`paraamr.shards`: ``<shard>.pairs.jsonl``, ``<shard>.sources.jsonl``,
    ``<shard>.progress.json``; resumable, crash-safe).

    Args:
        records: source records (already subset / sharded / limited by the caller).
        parser: a parser backend (:mod:`paraamr.parsers`).
        encoder: a sentence-transformers model (``encode``).
        cfg: metric settings.
        out_dir: the corpus's shard directory.
        shard: which shard these records are (names the files; default: the only one).
        signature: the metric signature (a shard refuses to resume under another one).
        skips: bad-input policy shared with the reader (counts end up in the result).
        progress: show a progress bar (``total`` sources, for the ETA).
        first_id: id of the first record without an ``index`` (global ids across shards).
    """
    skips = skips if skips is not None else SkipLog(cfg.on_error)
    scorer = _PairScorer(parser, encoder, cfg, skips)

    def process(chunk: list[SourceRecord]) -> ChunkOutput:
        res = ShardResult()
        bleu = None if scorer.bleu.per_pair else scorer.bleu.accumulator()
        scorer.corpus_bleu = bleu
        pairs: list[dict] = []
        sources: list[dict] = []
        for srow, rows in scorer.score_chunk(chunk, 0, res):
            sources.append(srow)
            pairs.extend(rows)
        counts = Counter(
            n_records=len(chunk),
            n_sources=len(sources),
            n_pairs=len(pairs),
            dropped_identical=res.dropped_identical,
        )
        if bleu is not None:
            counts.update({f"corpus_bleu_{i}": v for i, v in enumerate(bleu.stats)})
        return ChunkOutput({"pairs": pairs, "sources": sources}, counts)

    try:
        state = run_shard(
            _with_ids(records, first_id),
            process,
            out_dir,
            shard=shard or Shard(),
            streams=STREAMS,
            settings={"signature": signature},
            chunk_size=cfg.chunk_size,
            total=total,
            desc=desc,
            unit="src",
            progress=progress,
            skips=skips,
        )
    finally:
        scorer.close()
    return shard_result(state)


def shard_result(state: dict) -> ShardResult:
    """A shard's :class:`ShardResult` from its progress record."""
    c = total_counts(state)
    skipped = {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("skip:") and v}
    return ShardResult(
        n_records=c.get("n_records", 0),
        n_sources=c.get("n_sources", 0),
        n_pairs=c.get("n_pairs", 0),
        dropped_identical=c.get("dropped_identical", 0),
        skips={"total": sum(skipped.values()), "by_reason": skipped},
        corpus_bleu_stats=[c.get(f"corpus_bleu_{i}", 0) for i in range(10)],
        signature=state["settings"]["signature"],
    )
