"""Benchmark: peak memory of Table 2's streaming path against corpus size.

    python benchmarks/bench_memory.py --out results/bench/memory.json [--sizes 100000 1000000]

For each size N it generates two corpora of N (source, paraphrase) pairs (two paraphrases per
source, so N/2 sources; ``pairs`` TSV and ParaNMT TSV, 90% of their sources shared), then runs,
in a fresh process, exactly what ``experiments/table2.py`` runs: the streaming readers, the common
subset (:func:`paraamr.corpus.subset.common_subset`), the subset stream, chunked scoring through the
shard runner (:func:`paraamr.diversity.scoring.score_records`) and the merge into a Table 2 row
with bootstrap intervals (:func:`paraamr.tables.table2.table2_row`). It reports the peak resident
set size (``ru_maxrss``) after each phase.

STAND-INS (said in the output too): the parser is a whitespace tokenizer with a flat tree and the
encoder a hashed bag of words, so that a million pairs run in minutes on 2 CPU cores. What is
measured is the memory of the streaming path (readers, subset keys, chunks, shard files, merge),
not of spaCy or MiniLM, whose memory is constant in corpus size (models + one batch).

``--merge`` measures the merge alone, in one process, at each size: the per-source values of
the seven metrics (NaN for a tenth of them) as the merge reads them from the shards, then the
means and bootstrap intervals computed the old way (each metric's finite values as a Python
list, a literal copy of the code before the flat merge) and the flat way
(:func:`paraamr.metrics.base.mean_score`), side by side. Memory is ``tracemalloc``'s peak
over the computation (NumPy reports its buffers to it); bytes per source are the slope between
the smallest and largest size, so fixed costs such as the bootstrap's index block drop out.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STANDINS = "parser: whitespace tokens + flat tree; encoder: hashed bag of words (64 dims)"

_VOCAB = (
    "the a cat dog house river city man woman child saw found took gave quickly slowly old "
    "new small large near far over under with without about because after before green"
)
WORDS = _VOCAB.split()


class WhitespaceParser:
    """Stand-in parser: whitespace tokens and a flat tree (constant memory per sentence)."""

    name = "whitespace-standin"

    def signature(self) -> str:
        return "whitespace-flat-tree(stand-in)"

    def parse(self, sentences):
        from paraamr.parsers.base import Parsed

        out = []
        for s in sentences:
            toks = tuple(s.split())
            out.append(Parsed(toks, "(S " + " ".join(f"(X {t})" for t in toks) + ")"))
        return out


class HashEncoder:
    """Stand-in encoder: L2-normalised hashed bag of words."""

    def encode(self, sents, **kw):
        out = np.zeros((len(sents), 64), dtype=np.float32)
        for i, s in enumerate(sents):
            for w in s.lower().split():
                out[i, hash(w) % 64] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return out


def _sentence(rng: random.Random, k: int) -> str:
    return f"Sentence {k} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))) + "."


def generate(d: Path, n_pairs: int) -> tuple[Path, Path]:
    """Two corpora of ``n_pairs`` pairs each (2 paraphrases per source; 90% shared sources)."""
    d.mkdir(parents=True, exist_ok=True)
    a, b = d / "a.tsv", d / "b.tsv"
    rng = random.Random(0)
    n_src = n_pairs // 2
    with open(a, "w", encoding="utf-8") as fa, open(b, "w", encoding="utf-8") as fb:
        for k in range(n_src):
            src = _sentence(rng, k)
            for _ in range(2):
                fa.write(f"{src}\t{_sentence(rng, k)}\n")
            kb = k if k % 10 else n_src + k  # every tenth source only in corpus a
            fb.write(f"{src if k % 10 else _sentence(rng, kb)}\t{_sentence(rng, kb)}\t0.5\n")
            fb.write(f"{src if k % 10 else _sentence(rng, kb)}\t{_sentence(rng, kb)}\t0.5\n")
    return a, b


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_one(a: str, b: str, out: str, bootstrap: int) -> dict:
    """One size, in this (fresh) process: peak RSS after each phase."""
    from paraamr.corpus.errors import SkipLog
    from paraamr.corpus.specs import CorpusSpec
    from paraamr.corpus.subset import common_subset
    from paraamr.diversity.scoring import MetricConfig, score_records
    from paraamr.shards import Shard
    from paraamr.tables.table2 import (
        corpus_dir,
        subset_stream,
        table2_row,
    )

    phases = {"imports": _peak_mib()}
    t0 = time.perf_counter()
    specs = [CorpusSpec("A", a, "pairs"), CorpusSpec("B", b, "paranmt")]
    keys = common_subset(specs, "raise", progress=False)
    phases["common_subset"] = _peak_mib()
    skips = SkipLog("raise")
    res = score_records(
        subset_stream(specs[0], keys, skips),
        parser=WhitespaceParser(),
        encoder=HashEncoder(),
        cfg=MetricConfig(chunk_size=1000),
        out_dir=corpus_dir(out, "A"),
        shard=Shard(),
        signature="bench-memory(stand-ins)",
        skips=skips,
    )
    phases["scoring"] = _peak_mib()
    t_score = time.perf_counter() - t0
    row = table2_row(out, "A", bootstrap=bootstrap, seed=0)
    phases["table2_row"] = _peak_mib()
    return {
        "common_sources": int(len(keys)),
        "scored_sources": res.n_sources,
        "scored_pairs": res.n_pairs,
        "row_n_sources": row["n_sources"],
        "seconds_to_score": round(t_score, 1),
        "seconds_total": round(time.perf_counter() - t0, 1),
        "peak_rss_mib_after": {k: round(v, 1) for k, v in phases.items()},
    }


def _merge_lists(values: dict, bootstrap: int) -> dict:
    """The merge before it was flat (literal copy): Python lists of the finite values."""
    from paraamr.metrics.aggregate import bootstrap_ci

    kept = {m: [v for v in values[m] if v == v] for m in values}  # NaN stands for None
    means = {m: float(sum(kept[m]) / len(kept[m])) if kept[m] else None for m in values}
    cis = {m: bootstrap_ci(kept[m], bootstrap, seed=0) for m in values if bootstrap and kept[m]}
    return {"means": means, "cis": cis}


def _merge_flat(values: dict, bootstrap: int) -> dict:
    from paraamr.metrics.base import mean_score

    summary = {m: mean_score(m, values[m], bootstrap=bootstrap) for m in values}
    return {
        "means": {m: s.value for m, s in summary.items()},
        "cis": {m: s.interval for m, s in summary.items() if s.interval is not None},
    }


def bench_merge(sizes: list[int], bootstrap: int) -> dict:
    """Peak traced bytes of the old and the flat merge on the same values, per size."""
    import tracemalloc
    from array import array

    from paraamr.tables.table2 import ALL

    rows: dict[str, dict] = {}
    for n in sizes:
        rng = np.random.default_rng(n)
        x = rng.random(n)
        x[rng.random(n) < 0.1] = np.nan
        values = {m: array("d", x.tobytes()) for m in ALL}  # what _source_values returns
        row: dict = {"sources": n}
        results = {}
        for name, fn in (("lists (before)", _merge_lists), ("flat (after)", _merge_flat)):
            tracemalloc.start()
            t0 = time.perf_counter()
            results[name] = fn(values, bootstrap)
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            row[name] = {"peak_mib": round(peak / 2**20, 1), "seconds": round(seconds, 2)}
        a, b = results.values()
        row["same_means"] = all(
            abs(a["means"][m] - b["means"][m]) <= 1e-12 for m in ALL
        )  # summation order differs (Python sum vs NumPy pairwise)
        row["same_intervals"] = a["cis"] == b["cis"]
        rows[f"{n}_sources"] = row
        print(json.dumps(row), flush=True)
    lo, hi = rows[f"{min(sizes)}_sources"], rows[f"{max(sizes)}_sources"]
    span = max(sizes) - min(sizes)
    per_source = {
        name: round((hi[name]["peak_mib"] - lo[name]["peak_mib"]) * 2**20 / span, 1)
        for name in ("lists (before)", "flat (after)")
    } if span else {}  # fmt: skip
    return {"runs": rows, "bytes_per_source": per_source, "metrics": len(ALL)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/bench/memory.json")
    ap.add_argument("--work", default="results/bench/memory-work")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--merge", action="store_true", help="the merge alone: before vs flat")
    args = ap.parse_args(argv)
    if args.merge:
        out = {
            "what": "Table 2 merge alone: means + bootstrap, Python lists (before) vs flat",
            "machine": {"platform": platform.platform(), "python": sys.version.split()[0]},
            "bootstrap_resamples": args.bootstrap,
            **bench_merge(args.sizes, args.bootstrap),
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=2))
        print(json.dumps(out["bytes_per_source"]))
        return
    if args._one:
        print(json.dumps(run_one(*args._one, args.bootstrap)))
        return
    out = {
        "what": "Table 2 streaming path: readers + common subset + scoring + merge",
        "STAND-INS": STANDINS,
        "machine": {"platform": platform.platform(), "python": sys.version.split()[0]},
        "bootstrap_resamples": args.bootstrap,
        "runs": {},
    }
    for n in args.sizes:
        d = Path(args.work) / str(n)
        a, b = generate(d, n)
        cmd = [sys.executable, __file__, "--bootstrap", str(args.bootstrap)]
        cmd += ["--_one", str(a), str(b), str(d / "out")]
        r = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
        out["runs"][f"{n}_pairs"] = json.loads(r.stdout.strip().splitlines()[-1])
        print(n, json.dumps(out["runs"][f"{n}_pairs"]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
