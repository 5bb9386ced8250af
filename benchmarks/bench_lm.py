"""Benchmark: perplexity scoring with a sentence count per batch (the way before) beside a
token budget per batch, on the same real sentences in one run.

    python benchmarks/bench_lm.py --out results/bench/lm.json [--n 400] [--budgets 512 1024]

The LM is the packaged SmolLM2-135M (``paraamr.lms.load_scorer("smollm2")``), fp32 on the CPU
(half precision is not used on a CPU: ``paraamr.utils.precision``). The sentences are a seeded
sample of ParaBank-Eval's sources (variable length). For each setting: sentences/s (median of
``--repeats``), forward passes, padded tokens, and the largest relative difference of any
sentence's perplexity from the sentence-count baseline (batching must not change a score).
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
    ap.add_argument("--out", default="results/bench/lm.json")
    a = ap.parse_args(argv)
    import torch

    from benchmarks.bench_build import real_sentences
    from paraamr.figures import save_benchmark
    from paraamr.lms import load_scorer
    from paraamr.signature import Signature

    torch.set_num_threads(a.threads)
    sents = real_sentences(Path(a.data_dir), a.n)
    scorer = load_scorer(a.model, batch_size=a.batch_size, device="cpu")
    scorer.perplexities(sents[:4])  # warm-up
    rows = {}
    base_row, base = run(scorer, sents, a.batch_size, None, a.repeats)
    rows[f"{a.batch_size} sentences per batch"] = base_row
    print(json.dumps(base_row), flush=True)
    for budget in a.budgets:
        row, ppl = run(scorer, sents, a.cap, budget, a.repeats)
        row["max_rel_diff_vs_baseline"] = max(
            abs(x - y) / y for x, y in zip(ppl, base, strict=True)
        )
        rows[f"{budget} tokens per batch"] = row
        print(json.dumps(row), flush=True)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
        },  # fmt: skip
        "model": scorer.label,
        "dtype": scorer.dtype,
        "sentences": a.n,
        "runs": rows,
    }
    sig = Signature.build(("bench", "lm"), ("model", a.model), ("n", a.n),
                          ("threads", torch.get_num_threads()))  # fmt: skip
    cases = {"perplexity": {k: r["sentences_per_s"] for k, r in rows.items()}}
    save_benchmark(a.out, out, cases, "sentences / s", sig)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
