"""Benchmark: TED kernels and end-to-end Table 2 scoring vs the naive loop, side by side.

    python benchmarks/bench_metrics.py --out results/bench/metrics.json

1. TED: the default compiled kernel (edist) vs zss on the same real gold-tree pairs (PTB sample,
   full trees), checking that every distance is identical.
2. End to end: Table 2's five metrics on the same real (source, paraphrase) pairs of ParaBank-Eval,
   (a) our pipeline: each distinct sentence parsed once in batches (``nlp.pipe``), embedded once in
   batches, TED with edist; (b) the naive loop of the authors' scripts: per pair one parser call per
   sentence, one encoder call per sentence, zss for TED.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pairs_from_parabank_eval(data: Path, n_pairs: int):
    from paraamr.corpus import read_corpus

    pairs = []
    for r in read_corpus(data / "paraphrase" / "parabank-eval", "parabank-eval-parabank1"):
        for p in r.paraphrases:
            if p.text.lower() != r.text.lower():
                pairs.append((r.text, p.text))
    random.Random(0).shuffle(pairs)
    return pairs[:n_pairs]


def bench_ted(data: Path, n_pairs: int, n_zss: int) -> dict:
    import zss
    from edist.ted import standard_ted

    from paraamr.metrics.ted import edist_distance, prepare, to_edist, to_zss, zss_distance
    from paraamr.metrics.trees import clean_ptb, parse_many

    trees = []
    for f in sorted((data / "ptb-sample" / "combined").glob("wsj_*.mrg")):
        trees += [c for c in map(clean_ptb, parse_many(f.read_text())) if c is not None]
    rng = random.Random(0)
    pairs = [
        (prepare(rng.choice(trees), None), prepare(rng.choice(trees), None)) for _ in range(n_pairs)
    ]
    sub = pairs[:n_zss]
    # kernel only: trees converted to each library's type beforehand
    e_in = [(to_edist(a), to_edist(b)) for a, b in pairs]
    z_in = [(to_zss(a), to_zss(b)) for a, b in sub]
    t0 = time.perf_counter()
    fast = [standard_ted(*x, *y) for x, y in e_in]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = [zss.simple_distance(x, y) for x, y in z_in]
    t_slow = time.perf_counter() - t0
    # with conversion from our tuple trees (what scoring pays per pair)
    t0 = time.perf_counter()
    fast2 = [edist_distance(a, b) for a, b in pairs]
    t_fast2 = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow2 = [zss_distance(a, b) for a, b in sub]
    t_slow2 = time.perf_counter() - t0
    from paraamr.metrics.trees import size

    return {
        "pairs_edist": n_pairs,
        "pairs_zss": len(sub),
        "mean_nodes_per_tree": sum(size(a) + size(b) for a, b in pairs) / (2 * len(pairs)),
        "kernel_only": {
            "edist_pairs_per_s": n_pairs / t_fast,
            "zss_pairs_per_s": len(sub) / t_slow,
            "speedup": (n_pairs / t_fast) / (len(sub) / t_slow),
        },
        "with_conversion": {
            "edist_pairs_per_s": n_pairs / t_fast2,
            "zss_pairs_per_s": len(sub) / t_slow2,
            "speedup": (n_pairs / t_fast2) / (len(sub) / t_slow2),
        },
        "identical_distances": fast[: len(sub)]
        == [int(x) for x in slow]
        == fast2[: len(sub)]
        == slow2,
    }


def bench_end_to_end(data: Path, n_pairs: int, n_naive: int) -> dict:
    import numpy as np

    from paraamr.corpus.records import Paraphrase, SourceRecord
    from paraamr.metrics.lexical import bleu_nltk, token_iou
    from paraamr.metrics.semantic import load_encoder
    from paraamr.metrics.ted import tree_edit_distance
    from paraamr.metrics.trees import to_bracketed
    from paraamr.parsers.projection import project_sentence
    from paraamr.parsers.spacy_backend import SpacyParser
    from paraamr.scoring import MetricConfig, score_records

    pairs = _pairs_from_parabank_eval(data, n_pairs)
    parser = SpacyParser()
    encoder = load_encoder("minilm", "cpu")
    encoder.encode(["warm up"])
    records: dict[str, SourceRecord] = {}
    for s, p in pairs:
        records.setdefault(s, SourceRecord(s, [])).paraphrases.append(Paraphrase(p))
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = score_records(
            list(records.values()),
            parser=parser,
            encoder=encoder,
            cfg=MetricConfig(chunk_size=10_000),
            out_dir=tmp,
        )
        t_ours = time.perf_counter() - t0

    naive = pairs[:n_naive]
    nlp = parser.nlp
    t0 = time.perf_counter()
    for s, p in naive:
        ds, dp = nlp(s), nlp(p)
        ts, tp = to_bracketed(project_sentence(ds[:])), to_bracketed(project_sentence(dp[:]))
        es, ep = encoder.encode([s])[0], encoder.encode([p])[0]
        float(np.dot(es, ep) / (np.linalg.norm(es) * np.linalg.norm(ep)))
        toks, tokp = [t.text for t in ds], [t.text for t in dp]
        bleu_nltk(tokp, toks)
        token_iou(toks, tokp)
        tree_edit_distance(ts, tp, depth=3, kernel="zss")
        tree_edit_distance(ts, tp, kernel="zss")
    t_naive = time.perf_counter() - t0
    return {
        "pairs": res.n_pairs,
        "sources": len(records),
        "naive_pairs": len(naive),
        "ours_pairs_per_s": res.n_pairs / t_ours,
        "naive_pairs_per_s": len(naive) / t_naive,
        "speedup": (res.n_pairs / t_ours) / (len(naive) / t_naive),
        "ours_seconds": t_ours,
        "naive_seconds": t_naive,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--ted-pairs", type=int, default=2000)
    ap.add_argument("--zss-pairs", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument(
        "--naive-pairs",
        type=int,
        default=2000,
        help="pairs for the naive loop (it is slow; rates are per pair)",
    )
    ap.add_argument("--out", default="results/bench/metrics.json")
    args = ap.parse_args(argv)
    data = Path(args.data_dir)
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "torch_threads": torch.get_num_threads(),
        },
        "ted": bench_ted(data, args.ted_pairs, args.zss_pairs),
    }
    print(json.dumps(out["ted"], indent=2), flush=True)
    out["end_to_end"] = bench_end_to_end(data, args.pairs, args.naive_pairs)
    print(json.dumps(out["end_to_end"], indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
