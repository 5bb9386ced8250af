"""Benchmark: TED kernels and end-to-end Table 2 scoring vs the naive loop, side by side.

    python benchmarks/bench_metrics.py --out results/bench/metrics.json

1. TED: the default compiled kernel (edist) vs zss on the same real gold-tree pairs (PTB sample,
   full trees), checking that every distance is identical.
2. End to end, on two corpus shapes of real pairs: ParaNMT-like (the ParaNMT-small test split, one
   paraphrase per source) and ParaBank-like (ParaBank-Eval, ~13 per source, where parsing each
   distinct sentence once saves the most): Table 2's five metrics by (a) our pipeline
   (``paraamr.diversity.scoring.score_records``: each distinct sentence parsed once in batches,
   embedded once in batches, TED with edist) and (b) the naive loop of the authors' scripts (per
   pair one parser call per sentence, one encoder call per sentence, zss for TED) on the first
   ``--naive-pairs`` of the same pairs. The benchmark fails unless both give the same five
   numbers on every pair both scored. ``fraction_of_parse_bound``: the time to parse the same
   unique sentences alone over the pipeline's time (1.0 = the pipeline is as fast as its parser
   allows).
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
    """ParaBank-like shape: whole sources with all their paraphrases (~13 per source), sources
    in a seeded random order, until ``n_pairs``."""
    from paraamr.corpus import read_corpus

    recs = list(read_corpus(data / "paraphrase" / "parabank-eval", "parabank-eval-parabank1"))
    random.Random(0).shuffle(recs)
    pairs = []
    for r in recs:
        pairs += [(r.text, p.text) for p in r.paraphrases if p.text.lower() != r.text.lower()]
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


def _pairs_from_paranmt_small(data: Path, n_pairs: int):
    """ParaNMT-like shape: one paraphrase per source (the ParaNMT-small test split)."""
    d = data / "paraphrase" / "qqppos-paranmt-small" / "para"
    src = (d / "test_src.txt").read_text(encoding="utf-8").splitlines()
    trg = (d / "test_trg.txt").read_text(encoding="utf-8").splitlines()
    pairs = [(s, t) for s, t in zip(src, trg, strict=True) if s.strip() and t.strip()]
    pairs = [(s, t) for s, t in pairs if s.lower() != t.lower()]
    random.Random(0).shuffle(pairs)
    return pairs[:n_pairs]


SIM_TOL = 1e-5  # one sentence per encoder call vs batches: float rounding of the padding


def _naive_row(s: str, p: str, nlp, encoder) -> dict:
    """The authors' loop for one pair: two parser calls, two encoder calls, zss for TED."""
    import numpy as np

    from paraamr.metrics.lexical import bleu_nltk, token_iou
    from paraamr.metrics.ted import tree_edit_distance
    from paraamr.metrics.trees import to_bracketed
    from paraamr.parsers.projection import project_sentence

    ds, dp = nlp(s), nlp(p)
    ts, tp = to_bracketed(project_sentence(ds[:])), to_bracketed(project_sentence(dp[:]))
    es, ep = encoder.encode([s])[0], encoder.encode([p])[0]
    toks, tokp = [t.text for t in ds], [t.text for t in dp]
    return {
        "similarity": float(np.dot(es, ep) / (np.linalg.norm(es) * np.linalg.norm(ep))),
        "one_minus_bleu": 1.0 - bleu_nltk(tokp, toks),
        "one_minus_iou": 1.0 - token_iou(toks, tokp),
        "ted3": tree_edit_distance(ts, tp, depth=3, kernel="zss"),
        "tedf": tree_edit_distance(ts, tp, kernel="zss"),
    }


def _mismatches(ours: dict, naive: dict) -> list[str]:
    out = []
    for k, v in naive.items():
        tol = SIM_TOL if k == "similarity" else 0.0
        if abs(float(ours[k]) - float(v)) > tol:
            out.append(f"{k}: pipeline {ours[k]!r} vs naive {v!r}")
    return out


def bench_end_to_end(pairs: list[tuple[str, str]], n_naive: int, parser, encoder) -> dict:
    """Table 2's five metrics on ``pairs``: the pipeline on all of them, the naive loop on the
    first ``n_naive``; every pair both scored must agree (BLEU, IoU, TED exactly, similarity
    within :data:`SIM_TOL`), else the benchmark fails."""
    import tempfile

    from paraamr.corpus.records import Paraphrase, SourceRecord
    from paraamr.diversity.scoring import MetricConfig, score_records
    from paraamr.metrics.semantic import embed_unique
    from paraamr.parsers.base import parse_unique

    records: dict[str, SourceRecord] = {}
    for s, p in pairs:
        records.setdefault(s, SourceRecord(s, [])).paraphrases.append(Paraphrase(p))
    uniq = list(dict.fromkeys([s for s, _ in pairs] + [p for _, p in pairs]))
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
        rows = [json.loads(x) for f in Path(tmp).glob("*.pairs.jsonl") for x in f.open()]
    ours = {(r["source"], r["paraphrase"]): r for r in rows}
    t0 = time.perf_counter()
    parse_unique(uniq, parser)  # the parser-bound limit: parsing the same unique sentences only
    t_parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    embed_unique(uniq, encoder, 128)  # and the encoder's share
    t_embed = time.perf_counter() - t0

    naive = pairs[:n_naive]
    t0 = time.perf_counter()
    naive_rows = [_naive_row(s, p, parser.nlp, encoder) for s, p in naive]
    t_naive = time.perf_counter() - t0
    bad = [
        f"{s!r} / {p!r}: {m}"
        for (s, p), nr in zip(naive, naive_rows, strict=True)
        for m in (
            ["pair missing from the pipeline's output"]
            if (s, p) not in ours
            else _mismatches(ours[s, p], nr)
        )
    ]
    if bad:
        raise SystemExit(
            f"pipeline and naive loop disagree on {len(bad)} pairs:\n" + "\n".join(bad[:10])
        )
    return {
        "pairs": res.n_pairs,
        "sources": len(records),
        "paraphrases_per_source": res.n_pairs / len(records),
        "unique_sentences": len(uniq),
        "naive_pairs": len(naive),
        "naive_equals_pipeline": True,  # checked above, on every naive pair
        "ours_pairs_per_s": res.n_pairs / t_ours,
        "naive_pairs_per_s": len(naive) / t_naive,
        "speedup": (res.n_pairs / t_ours) / (len(naive) / t_naive),
        "ours_seconds": t_ours,
        "naive_seconds": t_naive,
        "parse_only_seconds": t_parse,
        "encode_only_seconds": t_embed,
        "fraction_of_parse_bound": t_parse / t_ours,
    }


def bars(out: dict) -> dict[str, dict[str, float]]:
    """Pairs per second, the naive way beside ours, for :func:`paraamr.figures.bar_figure`."""
    cases = {}
    for part in ("kernel_only", "with_conversion"):
        t = out["ted"][part]
        label = "TED " + part.replace("_", " ")
        cases[label] = {"naive": t["zss_pairs_per_s"], "ours": t["edist_pairs_per_s"]}
    for name, r in out.get("end_to_end", {}).items():
        cases["Table 2, " + name.split(" (")[0]] = {
            "naive": r["naive_pairs_per_s"],
            "ours": r["ours_pairs_per_s"],
        }
    return cases


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
        default=400,
        help="pairs for the naive loop (the first N of the same pairs; it is slow; per-pair rates)",
    )
    ap.add_argument("--out", default="results/bench/metrics.json")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    args = ap.parse_args(argv)
    data = Path(args.data_dir)
    import torch

    torch.set_num_threads(args.threads)
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
    from paraamr.metrics.semantic import load_encoder
    from paraamr.parsers.spacy_backend import SpacyParser

    parser, encoder = SpacyParser(), load_encoder("minilm", "cpu")
    encoder.encode(["warm up"])
    parser.parse(["Warm up ."])
    shapes = {
        "paranmt_like (ParaNMT-small test, 1 paraphrase/source)": _pairs_from_paranmt_small(
            data, args.pairs
        ),
        "parabank_like (ParaBank-Eval, ~13 paraphrases/source)": _pairs_from_parabank_eval(
            data, args.pairs
        ),
    }
    out["end_to_end"] = {}
    for name, pairs in shapes.items():
        out["end_to_end"][name] = bench_end_to_end(pairs, args.naive_pairs, parser, encoder)
        print(name, json.dumps(out["end_to_end"][name], indent=2), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    from paraamr.figures import save_bars
    from paraamr.signature import Signature

    m = out["machine"]
    sig = Signature.build(
        ("bench", "metrics"), ("cpus", m["cpus"]), ("threads", m["torch_threads"])
    )
    save_bars(Path(args.out).with_suffix(""), bars(out), "pairs / s (log scale)", sig,
              "naive loop vs ours", log=True)  # fmt: skip
    print(f"wrote {args.out} and {Path(args.out).with_suffix('.png')}")


if __name__ == "__main__":
    main()
