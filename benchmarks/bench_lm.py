"""Benchmark: perplexity scoring in fp32 and bf16 autocast, with a sentence count per batch (the
way before) and a token budget per batch, on the same real sentences in one run.

    python benchmarks/bench_lm.py --out results/bench/lm.json [--n 400] [--budgets 512 1024]

The LM is the packaged SmolLM2-135M (``paraamr.lms.load_scorer("smollm2")``) on the CPU, in fp32
and with ``dtype=bf16`` (fp32 weights, bf16 autocast: native with AVX512-BF16 / AMX, which the
output records). The sentences are a seeded
sample of ParaBank-Eval's sources (variable length). For each setting: sentences/s (median of
``--repeats``), forward passes, padded tokens, and against the first setting (fp32, sentence
count) the median and largest relative difference of the per-sentence perplexities and their
Spearman (batching must not change a score; bf16 changes it a little).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: benchmarks.bench_build is its sibling
    sys.path.insert(0, str(ROOT))


def run(scorer, sentences: list[str], batch_size: int, max_tokens: int | None, repeats: int):
    """Median seconds, passes and padded tokens of scoring ``sentences`` once."""
    shapes: list[tuple[int, int]] = []
    forward = scorer.model.forward

    def counted(**kw):
        shapes.append(tuple(kw["input_ids"].shape))
        return forward(**kw)

    scorer.model.forward = counted
    scorer.max_tokens = max_tokens
    times, ppl = [], []
    try:
        for _ in range(repeats):
            shapes.clear()
            t0 = time.perf_counter()
            ppl = scorer.perplexities(sentences, batch_size=batch_size)
            times.append(time.perf_counter() - t0)
    finally:
        scorer.model.forward = forward
    med = statistics.median(times)
    return {
        "batch_size": batch_size,
        "max_tokens": max_tokens,
        "sentences_per_s": round(len(sentences) / med, 2),
        "median_s": round(med, 2),
        "forward_passes": len(shapes),
        "padded_tokens": sum(n * w for n, w in shapes),
    }, ppl


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--n", type=int, default=400, help="sentences (the same for every setting)")
    ap.add_argument("--batch-size", type=int, default=16, help="the sentence-count baseline")
    ap.add_argument("--budgets", type=int, nargs="+", default=[512, 1024])
    ap.add_argument("--cap", type=int, default=256, help="most sentences per token-budget batch")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"])
    ap.add_argument("--out", default="results/bench/lm.json")
    a = ap.parse_args(argv)
    import torch
    from scipy.stats import spearmanr

    from benchmarks.bench_build import real_sentences
    from paraamr.figures import save_benchmark
    from paraamr.lms import load_scorer
    from paraamr.precision import cpu_bf16_support
    from paraamr.signature import Signature

    torch.set_num_threads(a.threads)
    sents = real_sentences(Path(a.data_dir), a.n)
    scorers = {
        p: load_scorer(a.model, batch_size=a.batch_size, device="cpu", dtype=p)
        for p in a.precisions
    }
    for sc in scorers.values():
        sc.perplexities(sents[:4])  # warm-up
    rows: dict[str, dict] = {}
    base = None
    for p, sc in scorers.items():
        for budget in (None, *a.budgets):
            size = a.batch_size if budget is None else a.cap
            row, ppl = run(sc, sents, size, budget, a.repeats)
            row["precision"] = "bf16 autocast" if sc.autocast else "fp32"
            name = f"{p}, " + (f"{size} sentences" if budget is None else f"{budget} tokens")
            if base is None:
                base = ppl
            else:
                rel = [abs(x - y) / y for x, y in zip(ppl, base, strict=True)]
                row["median_rel_diff_vs_baseline"] = statistics.median(rel)
                row["max_rel_diff_vs_baseline"] = max(rel)
                row["spearman_vs_baseline"] = float(spearmanr(base, ppl).statistic)
            row["batching"] = name.split(", ", 1)[1] + " per batch"
            rows[name + " per batch"] = row
            print(name, json.dumps(row), flush=True)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
        },  # fmt: skip
        "model": next(iter(scorers.values())).label,
        "cpu_bf16": cpu_bf16_support(),
        "sentences": a.n,
        "runs": rows,
    }
    sig = Signature.build(("bench", "lm"), ("model", a.model), ("n", a.n),
                          ("threads", torch.get_num_threads()))  # fmt: skip
    cases: dict[str, dict[str, float]] = {}
    for r in rows.values():  # one group per precision, one bar per batching
        cases.setdefault(r["precision"], {})[r["batching"]] = r["sentences_per_s"]
    save_benchmark(a.out, out, cases, "sentences / s", sig)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
