"""The ParaAMR corpus builder: text → AMR → re-focus → linearize → text → post-process → perplexity.

:class:`Builder` turns a chunk of input items into corpus records and rejects; :func:`build_shard`
drives one shard with crash-safe resume; :func:`merge_build` joins the shards in input order.

Shards run through the shared runner (:mod:`paraamr.shards`, its resume and finishing contract):
streams ``records`` and ``rejects``, one chunk = one resume step. Everything that decides the output
(sharding by input line, chunk boundaries, greedy decoding, per-line random seeds) is independent
of restarts, so a run killed at any moment (``kill -9``) and restarted writes byte for byte what an
uninterrupted run writes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.builder.inputs import Item, read_items
from paraamr.builder.postprocess import postprocess_indexed
from paraamr.corpus.errors import check_on_error
from paraamr.errors import ParaAMRError
from paraamr.shards import ChunkOutput, Shard, merge_streams, run_shard
from paraamr.signature import Signature, package_versions, versions_field
from paraamr.utils import limited

STREAMS = ("records", "rejects")

__all__ = ["BuildConfig", "Builder", "BuildError", "build_shard", "merge_build", "STREAMS"]

log = logging.getLogger(__name__)


class BuildError(ParaAMRError):
    """A record failed a stage and ``on_error=raise``: names the file, line and stage."""


@dataclass(frozen=True)
class BuildConfig:
    """Settings that change the output (all recorded in each shard's progress file)."""

    focus_policy: str = "all"
    focus_k: int | None = None
    seed: int = 0
    lowercase: bool = True
    dedupe: bool = True
    drop_identical: bool = True
    keep_graphs: bool = False
    max_words: int = 100
    chunk_size: int = 64
    on_error: str = "skip"
    min_similarity: float | None = None

    def __post_init__(self) -> None:
        from paraamr.amr.refocus import check_policy
        from paraamr.corpus.filters import ACCEPTABLE, similarity_floor
        from paraamr.errors import ConfigError

        check_on_error(self.on_error)
        if similarity_floor(self.min_similarity) == ACCEPTABLE:
            raise ConfigError(
                "BuildConfig.min_similarity takes a cosine: 'acceptable' is resolved to one "
                "before (paraamr.builder.run.make_builder)"
            )
        check_policy(self.focus_policy, self.focus_k)  # a bad setting is not a bad graph


def line_seed(seed: int, line: int) -> int:
    """A per-line seed (independent of chunking and restarts).

    >>> line_seed(0, 1) == line_seed(0, 1) != line_seed(0, 2)
    True
    """
    h = hashlib.blake2b(f"{seed}:{line}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") & 0x7FFFFFFF


@dataclass
class Builder:
    """Runs the stages on chunks of items. ``stog`` (the AMR parser, text to graph) may be
    ``None`` for gold-graph input; ``lm`` (the perplexity language model) ``None`` skips
    perplexity; ``similarity`` (a :class:`paraamr.metrics.pairwise.Similarity`: an encoder
    and its label) ``None`` skips the similarity field and allows no ``min_similarity``."""

    generator: object
    stog: object | None = None
    lm: object | None = None
    cfg: BuildConfig = field(default_factory=BuildConfig)
    source: str = "<input>"
    timings: Counter = field(default_factory=Counter)  # seconds and item counts per stage
    similarity: object | None = None

    def __post_init__(self) -> None:
        from paraamr.errors import ConfigError

        if self.cfg.min_similarity is not None and self.similarity is None:
            raise ConfigError(
                "filter.min_similarity needs a similarity encoder (similarity=minilm), "
                "not ~similarity"
            )

    def stage_rates(self) -> dict[str, str]:
        """Items per second of each model stage so far (for the progress bar)."""
        out = {}
        for stage in ("parse", "generate", "sim", "ppl"):
            t = self.timings[f"{stage}_s"]
            if t > 0:
                out[stage] = f"{self.timings[stage] / t:.1f}/s"
        return out

    def signature(self) -> Signature:
        """The models and settings that made the output (recorded in every shard).

        >>> from paraamr.testing.fakes import ConceptGenerator
        >>> Builder(ConceptGenerator()).signature().fields["stog"]
        'gold-graphs'
        """
        sig = lambda m: m.signature() if m is not None else "none"  # noqa: E731
        config = ",".join(f"{k}={v}" for k, v in sorted(self.cfg.__dict__.items()))
        return Signature.build(
            ("paraamr", package_versions()["paraamr"]),
            ("stog", sig(self.stog) if self.stog is not None else "gold-graphs"),
            ("generator", sig(self.generator)),
            ("lm", sig(self.lm)),
            ("sim", sig(self.similarity)),
            ("config", config),
            ("versions", versions_field()),
        )

    def _reject(self, rejects: list, item: Item, stage: str, reason: str) -> None:
        if self.cfg.on_error == "raise":
            raise BuildError(f"{self.source}:{item.line}: {stage}: {reason}")
        rejects.append({"line": item.line, "text": item.text, "stage": stage, "reason": reason})

    def process_chunk(self, items: list[Item]) -> tuple[list[dict], list[dict], Counter]:
        """Records (canonical format + ``line``), rejects (line, text, stage, reason), counts."""
        from paraamr.amr.refocus import candidate_foci, linearize, refocus
        from paraamr.amr.serialize import PLACEHOLDER, is_placeholder
        from paraamr.builder.graphs import decode_amr

        rejects: list[dict] = []
        counts: Counter = Counter()
        todo: list[Item] = []
        for it in items:
            if it.error:
                self._reject(rejects, it, "input", it.error)
            elif it.graph is None and len(it.text.split()) > self.cfg.max_words:
                n = len(it.text.split())
                self._reject(rejects, it, "input", f"too long ({n} words > max_words)")
            else:
                todo.append(it)
        # 1. text -> AMR (batched over the chunk)
        need = [it for it in todo if it.graph is None]
        if need:
            if self.stog is None:
                raise BuildError("sentence input needs an AMR parser (stog) in the config")
            t0 = time.perf_counter()
            texts = [it.text for it in need]
            graphs = self.stog.parse(texts)
            if hasattr(self.stog, "cut"):  # sentences longer than the parser reads
                counts["parse_cut"] += self.stog.cut(texts)
                counts["parsed"] += len(texts)
            self.timings.update({"parse_s": time.perf_counter() - t0, "parse": len(need)})
            for it, g in zip(need, graphs, strict=True):
                it.graph = g
        # 2-3. re-focus + linearize
        jobs: list[tuple[Item, str, str]] = []  # (item, focus, one-line graph)
        for it in todo:
            if it.graph is None:
                self._reject(rejects, it, "parse", "the AMR parser returned no graph (None)")
                continue
            try:
                graph, n_trees = decode_amr(it.graph)
                if is_placeholder(graph):  # `paraamr amr parse` found no graph for this line
                    self._reject(rejects, it, "parse", f"placeholder graph {PLACEHOLDER}")
                    continue
                # a parser can write one triple twice: kept once by refocus, counted here
                if dup := len(graph.triples) - len(set(graph.triples)):
                    counts["duplicate_triples"] += dup
                foci = candidate_foci(
                    graph,
                    self.cfg.focus_policy,
                    self.cfg.focus_k,
                    seed=line_seed(self.cfg.seed, it.line),
                )
            except Exception as e:  # penman / refocus errors on garbage graphs (e.g. "()")
                self._reject(rejects, it, "parse", f"malformed AMR graph: {type(e).__name__}: {e}")
                continue
            if not foci:
                n = len(graph.instances())
                self._reject(
                    rejects,
                    it,
                    "refocus",
                    f"no candidate focus under focus.policy={self.cfg.focus_policy} "
                    f"({n}-node graph)",
                )
                continue
            ok, first_error = 0, ""
            for f in foci:
                try:
                    jobs.append((it, f, linearize(refocus(graph, f))))
                    ok += 1
                except Exception as e:  # AMRError, or penman errors on garbage graphs
                    counts["focus_failed"] += 1
                    first_error = first_error or f"{type(e).__name__}: {e}"
                    log.debug("line %d focus %s: %s", it.line, f, e)
            if not ok:
                what = f"disconnected graph ({n_trees} trees): " if n_trees > 1 else ""
                self._reject(
                    rejects,
                    it,
                    "refocus",
                    f"{what}no focus of {len(foci)} could be laid out ({first_error})",
                )
        # 4. AMR -> text (one batched call for the chunk; isolate failures if it raises)
        t0 = time.perf_counter()
        texts = self._generate([g for _, _, g in jobs], counts)
        self.timings.update({"generate_s": time.perf_counter() - t0, "generate": len(jobs)})
        by_item: dict[int, list[tuple[str, str, str]]] = {}
        for (it, f, g), t in zip(jobs, texts, strict=True):
            if t is not None:
                by_item.setdefault(it.line, []).append((t, f, g))
        # 5. post-process
        records: list[dict] = []
        with_jobs = {it.line for it, _, _ in jobs}
        for it in todo:
            if it.line not in by_item:
                if it.line in with_jobs:
                    self._reject(rejects, it, "generate", "the generator failed on every graph")
                continue
            cands = by_item[it.line]
            kept, dropped = postprocess_indexed(
                it.text,
                [c[0] for c in cands],
                lowercase=self.cfg.lowercase,
                dedupe=self.cfg.dedupe,
                drop_identical=self.cfg.drop_identical,
            )
            counts.update({f"dropped_{k}": v for k, v in dropped.items()})
            if not kept:
                self._reject(
                    rejects,
                    it,
                    "postprocess",
                    f"no paraphrase left after post-processing ({dropped})",
                )
                continue
            paras = []
            for i, text in kept:
                p = {"para_text": text}
                if self.cfg.keep_graphs:
                    p["focus"], p["amr"] = cands[i][1], cands[i][2]
                paras.append(p)
            records.append({"line": it.line, "text": it.text, "paraphrases": paras})
        # 6. similarity to the source (and the similarity filter)
        if self.similarity is not None and records:
            records = self._similarities(records, rejects, counts)
        # 7. perplexity
        if self.lm is not None and records:
            flat = [p for r in records for p in r["paraphrases"]]
            t0 = time.perf_counter()
            ppls = self.lm.perplexities([p["para_text"] for p in flat])
            self.timings.update({"ppl_s": time.perf_counter() - t0, "ppl": len(flat)})
            for p, ppl in zip(flat, ppls, strict=True):
                p["perplexity"] = round(ppl, 4) if ppl == ppl else None
        rejects.sort(key=lambda r: r["line"])  # stages reject in turn; the stream is in line order
        counts["records"] += len(records)
        counts["rejects"] += len(rejects)
        counts["paraphrases"] += sum(len(r["paraphrases"]) for r in records)
        return records, rejects, counts

    def _similarities(self, records: list[dict], rejects: list, counts: Counter) -> list[dict]:
        """Give every paraphrase its cosine to its source (``similarity``, 4 decimals); with
        ``min_similarity``, drop those under it (``dropped_similarity``) and reject the
        records left with none (stage ``filter``)."""
        flat = [(r, p) for r in records for p in r["paraphrases"]]
        t0 = time.perf_counter()
        sims = self.similarity.cosines([(r["text"], p["para_text"]) for r, p in flat])
        self.timings.update({"sim_s": time.perf_counter() - t0, "sim": len(flat)})
        for (_, p), sim in zip(flat, sims, strict=True):
            p["similarity"] = round(float(sim), 4) if sim == sim else None  # NaN: no score
        floor = self.cfg.min_similarity
        if floor is None:
            return records
        from paraamr.corpus.filters import passes_similarity

        kept_records = []
        for r in records:
            kept = [
                p for p in r["paraphrases"] if passes_similarity(p["similarity"], floor, counts)
            ]
            if kept:
                kept_records.append({**r, "paraphrases": kept})
            else:
                item = Item(line=r["line"], text=r["text"])
                best = max(
                    (p["similarity"] for p in r["paraphrases"] if p["similarity"] is not None),
                    default=float("nan"),
                )
                self._reject(
                    rejects,
                    item,
                    "filter",
                    f"no paraphrase at similarity >= {floor:g} (best {best:.4f} of "
                    f"{len(r['paraphrases'])})",
                )
        return kept_records

    def _generate(self, graphs: list[str], counts: Counter) -> list[str | None]:
        """The generator's sentence of each graph, ``None`` (counted) where it fails: one
        batched call; if it raises, the batch is halved until each failing graph stands alone,
        so one bad graph among ``n`` costs about ``2·log2(n)`` calls, not ``n`` one-graph ones."""

        def halves(part: list[str], failed: bool = False) -> list[str | None]:
            if not failed:
                try:
                    return [t for t, _ in self.generator.generate(part)]
                except Exception:  # noqa: BLE001 - counted and rejected by the caller
                    pass
            if len(part) == 1:
                counts["generate_failed"] += 1
                return [None]
            mid = len(part) // 2
            return halves(part[:mid]) + halves(part[mid:])

        if not graphs:
            return []
        try:
            return [t for t, _ in self.generator.generate(graphs)]
        except Exception as e:  # one bad graph must not sink the chunk
            n = len(graphs)
            log.warning("generator failed on a batch of %d (%s); retrying in halves", n, e)
        return halves(graphs, failed=True)


def shard_items(items: Iterable[Item], shard: Shard) -> Iterator[Item]:
    """Input line ``k`` (1-based) belongs to shard ``(k - 1) % num_shards``."""
    return shard.select(items, position=lambda _, it: it.line - 1)


def build_shard(
    builder: Builder,
    input_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    input_format: str | None = None,
    shard: int = 0,
    num_shards: int = 1,
    limit: int | None = None,
    progress: bool = True,
) -> dict:
    """Build one shard through the shared runner (:func:`paraamr.shards.run_shard`), resuming
    if a previous run of it was interrupted; returns its progress record."""
    sh = Shard(shard, num_shards)
    items = limited(shard_items(read_items(input_path, input_format), sh), limit)

    def process(chunk: list[Item]) -> ChunkOutput:
        records, rejects, counts = builder.process_chunk(chunk)
        return ChunkOutput({"records": records, "rejects": rejects}, counts)

    state = run_shard(
        items,
        process,
        out_dir,
        shard=sh,
        streams=STREAMS,
        settings={"builder": builder.signature(), "limit": limit},
        chunk_size=builder.cfg.chunk_size,
        total=_count_items(input_path, input_format, sh, limit),
        desc=f"build {sh.name}",
        unit="sent",
        progress=progress,
        postfix=builder.stage_rates,
    )
    c = state["counts"]
    rates = ", ".join(f"{k} {v}" for k, v in builder.stage_rates().items()) or "none run"
    log.info(
        "%s: %d items, %d records, %d paraphrases, %d rejects; stage rates this run: %s",
        sh.name,
        c.get("items", 0),
        c.get("records", 0),
        c.get("paraphrases", 0),
        c.get("rejects", 0),
        rates,
    )
    return state


def _count_items(path, fmt, shard: Shard, limit: int | None) -> int | None:
    """Items this shard will see (for the ETA): a fast newline count for line formats."""
    from paraamr.builder.inputs import guess_input_format

    if (fmt or guess_input_format(path)) == "penman":
        return limit
    n = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            n += block.count(b"\n")
    per_shard = (n - shard.index + shard.count - 1) // shard.count
    return min(per_shard, limit) if limit else per_shard


def merge_build(out_dir: str | os.PathLike, num_shards: int, output: str | os.PathLike) -> dict:
    """Join finished shards into one corpus (and one rejects file) in input-line order."""
    output = Path(output)
    rejects = output.with_name(output.stem + ".rejects.jsonl")
    totals = merge_streams(
        out_dir,
        {"records": output, "rejects": rejects},
        order_key="line",
        num_shards=num_shards,
    )
    return dict(totals)
