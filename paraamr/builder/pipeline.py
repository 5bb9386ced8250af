"""The ParaAMR corpus builder: text → AMR → re-focus → linearize → text → post-process → perplexity.

:class:`Builder` turns a chunk of input items into corpus records and rejects; :func:`run_shard`
drives one shard with crash-safe resume; :func:`merge_shards` joins the shards in input order.

Resume contract: a shard appends each finished chunk to ``<shard>.jsonl.partial`` (and its rejects
to ``<shard>.rejects.jsonl.partial``), fsyncs, then atomically rewrites ``<shard>.progress.json``
with the chunk count and both file sizes. A restarted run truncates the partial files to the
recorded sizes and skips the recorded chunks. Everything that decides the output (sharding by input
line, chunk boundaries, greedy decoding, per-line random seeds) is independent of restarts, so a run
killed at any moment (``kill -9``) and restarted writes byte for byte what an uninterrupted run
writes. On completion the partial files are renamed to their final names.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.builder.inputs import Item, read_items
from paraamr.builder.postprocess import postprocess_indexed
from paraamr.errors import ParaAMRError
from paraamr.utils import chunked

__all__ = ["BuildConfig", "Builder", "BuildError", "run_shard", "merge_shards", "shard_name"]

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

    def __post_init__(self) -> None:
        from paraamr.amr.refocus import check_policy

        if self.on_error not in ("raise", "skip"):
            raise ValueError("on_error must be raise or skip")
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
    """Runs the stages on chunks of items. ``parser`` may be ``None`` for gold-graph input;
    ``scorer`` ``None`` skips perplexity."""

    generator: object
    parser: object | None = None
    scorer: object | None = None
    cfg: BuildConfig = field(default_factory=BuildConfig)
    source: str = "<input>"
    timings: Counter = field(default_factory=Counter)  # seconds and item counts per stage

    def stage_rates(self) -> dict[str, str]:
        """Items per second of each model stage so far (for the progress bar)."""
        out = {}
        for stage in ("parse", "generate", "ppl"):
            t = self.timings[f"{stage}_s"]
            if t > 0:
                out[stage] = f"{self.timings[stage] / t:.1f}/s"
        return out

    def signature(self) -> dict:
        sig = lambda m: m.signature() if m is not None else None  # noqa: E731
        return {
            "parser": sig(self.parser) or "gold-graphs",
            "generator": sig(self.generator),
            "lm": sig(self.scorer),
            "config": self.cfg.__dict__,
        }

    def _reject(self, rejects: list, item: Item, stage: str, reason: str) -> None:
        if self.cfg.on_error == "raise":
            raise BuildError(f"{self.source}:{item.line}: {stage}: {reason}")
        rejects.append({"line": item.line, "text": item.text, "stage": stage, "reason": reason})

    def process_chunk(self, items: list[Item]) -> tuple[list[dict], list[dict], Counter]:
        """Records (canonical format + ``line``), rejects (line, text, stage, reason), counts."""
        import penman
        from penman.models.amr import model as amr_model

        from paraamr.amr.refocus import candidate_foci, linearize, refocus

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
            if self.parser is None:
                raise BuildError("sentence input needs an AMR parser (stog) in the config")
            t0 = time.perf_counter()
            graphs = self.parser.parse([it.text for it in need])
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
                graph = penman.decode(it.graph, model=amr_model)
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
                self._reject(rejects, it, "refocus", "no candidate focus (one-node graph?)")
                continue
            ok = 0
            for f in foci:
                try:
                    jobs.append((it, f, linearize(refocus(graph, f))))
                    ok += 1
                except Exception as e:  # AMRError, or penman errors on garbage graphs
                    counts["focus_failed"] += 1
                    log.debug("line %d focus %s: %s", it.line, f, e)
            if not ok:
                self._reject(rejects, it, "refocus", f"no focus of {len(foci)} could be laid out")
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
        # 6. perplexity
        if self.scorer is not None and records:
            flat = [p for r in records for p in r["paraphrases"]]
            t0 = time.perf_counter()
            ppls = self.scorer.perplexities([p["para_text"] for p in flat])
            self.timings.update({"ppl_s": time.perf_counter() - t0, "ppl": len(flat)})
            for p, ppl in zip(flat, ppls, strict=True):
                p["perplexity"] = round(ppl, 4) if ppl == ppl else None
        counts["records"] += len(records)
        counts["rejects"] += len(rejects)
        counts["paraphrases"] += sum(len(r["paraphrases"]) for r in records)
        return records, rejects, counts

    def _generate(self, graphs: list[str], counts: Counter) -> list[str | None]:
        if not graphs:
            return []
        try:
            return [t for t, _ in self.generator.generate(graphs)]
        except Exception as e:  # one bad graph must not sink the chunk: retry one by one
            log.warning("generator failed on a batch (%s); retrying graph by graph", e)
        out: list[str | None] = []
        for g in graphs:
            try:
                out.append(self.generator.generate([g])[0][0])
            except Exception:  # noqa: BLE001 - counted and rejected by the caller
                counts["generate_failed"] += 1
                out.append(None)
        return out


def shard_name(shard: int, num_shards: int) -> str:
    return f"shard-{shard:05d}-of-{num_shards:05d}"


def _truncate(path: Path, size: int) -> None:
    with open(path, "ab") as fh:
        fh.truncate(size)


def _append(path: Path, rows: Iterable[dict]) -> int:
    with open(path, "ab") as fh:
        for r in rows:
            fh.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
        return fh.tell()


def _write_json_atomic(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def shard_items(items: Iterable[Item], shard: int, num_shards: int) -> Iterator[Item]:
    """Input line ``k`` (1-based) belongs to shard ``(k - 1) % num_shards``."""
    if not 0 <= shard < num_shards:
        raise ParaAMRError(f"shard must be in [0, {num_shards}), got {shard}")
    return (it for it in items if (it.line - 1) % num_shards == shard)


def run_shard(
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
    """Build one shard (resuming if a previous run of it was interrupted); returns its progress."""
    from tqdm.auto import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = shard_name(shard, num_shards)
    final, final_rej = out / f"{name}.jsonl", out / f"{name}.rejects.jsonl"
    part, part_rej = out / f"{name}.jsonl.partial", out / f"{name}.rejects.jsonl.partial"
    prog_path = out / f"{name}.progress.json"
    sig = builder.signature()
    state = {
        "chunks_done": 0,
        "out_bytes": 0,
        "rejects_bytes": 0,
        "counts": {},
        "done": False,
        "signature": sig,
        "input": str(input_path),
        "limit": limit,
    }
    if prog_path.exists():
        old = json.loads(prog_path.read_text())
        if old.get("signature") != json.loads(json.dumps(sig)) or old.get("limit") != limit:
            raise ParaAMRError(
                f"{prog_path} was written with other settings; remove the shard's "
                "files to rebuild it"
            )
        state = old
        if state["done"] and final.exists():
            log.info("%s already complete", name)
            return state
    _truncate(part, state["out_bytes"])
    _truncate(part_rej, state["rejects_bytes"])
    items = shard_items(read_items(input_path, input_format), shard, num_shards)
    if limit:
        import itertools

        items = itertools.islice(items, limit)
    counts = Counter(state["counts"])
    total = _count_items(input_path, input_format, shard, num_shards, limit)
    bar = tqdm(
        desc=f"build {name}",
        unit="sent",
        total=total,
        disable=not progress,
        initial=counts["items"],
    )
    with bar:
        for k, chunk in enumerate(chunked(items, builder.cfg.chunk_size)):
            if k < state["chunks_done"]:
                continue
            records, rejects, c = builder.process_chunk(chunk)
            state["out_bytes"] = _append(part, records)
            state["rejects_bytes"] = _append(part_rej, rejects)
            counts.update(c)
            counts["items"] += len(chunk)
            state["chunks_done"] = k + 1
            state["counts"] = dict(counts)
            _write_json_atomic(prog_path, state)
            bar.update(len(chunk))
            bar.set_postfix(builder.stage_rates(), refresh=False)
    os.replace(part, final)
    os.replace(part_rej, final_rej)
    state["done"] = True
    _write_json_atomic(prog_path, state)
    log.info(
        "%s: %d items, %d records, %d paraphrases, %d rejects",
        name,
        counts["items"],
        counts["records"],
        counts["paraphrases"],
        counts["rejects"],
    )
    return state


def _count_items(path, fmt, shard: int, num_shards: int, limit: int | None) -> int | None:
    """Items this shard will see (for the ETA): a fast newline count for line formats."""
    from paraamr.builder.inputs import guess_input_format

    if (fmt or guess_input_format(path)) == "penman":
        return limit
    n = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            n += block.count(b"\n")
    per_shard = (n - shard + num_shards - 1) // num_shards
    return min(per_shard, limit) if limit else per_shard


def _rows(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)["line"], line


def merge_shards(out_dir: str | os.PathLike, num_shards: int, output: str | os.PathLike) -> dict:
    """Join finished shards into one corpus (and one rejects file) in input-line order."""
    out = Path(out_dir)
    names = [shard_name(i, num_shards) for i in range(num_shards)]
    missing = [n for n in names if not (out / f"{n}.jsonl").exists()]
    if missing:
        raise ParaAMRError(f"{out}: unfinished or missing shards: {', '.join(missing)}")
    output = Path(output)
    totals: Counter = Counter()
    for suffix, target in (
        (".jsonl", output),
        (".rejects.jsonl", output.with_name(output.stem + ".rejects.jsonl")),
    ):
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for _, line in heapq.merge(*(_rows(out / f"{n}{suffix}") for n in names)):
                fh.write(line)
        os.replace(tmp, target)
    for n in names:
        totals.update(json.loads((out / f"{n}.progress.json").read_text())["counts"])
    return dict(totals)
