"""Benchmark: the sentence encoder of Table 2's similarity in each precision and backend, side by
side on the same real sentences in one run.

    python benchmarks/bench_encoder.py --out results/bench/encoder.json [--sources 300]

The pairs are ParaBank-Eval's (source, ParaBank-1 paraphrase) pairs of the first ``--sources``
sources; every distinct sentence is encoded (``paraamr.metrics.semantic.cosine_pairs``, batch
128) by the packaged MiniLM in fp32 and under bf16 autocast
(``paraamr.metrics.semantic.AutocastEncoder``; ``similarity.precision=bf16``), and with its
transformer exported to ONNX (``paraamr.metrics.exported.ExportedEncoder``): ONNX Runtime fp32
(``similarity.backend=onnx``), its int8 copy (``similarity.precision=int8``) and OpenVINO
(``similarity.backend=openvino``); a backend whose package is missing is left out. For each:
sentences/s (median of ``--repeats``), and against fp32 the per-pair cosines' Spearman and
largest difference and the similarity column as Table 2 aggregates it (mean over a source's
paraphrases, then over sources, in %). Whether the CPU runs bf16 natively is in the output
(``paraamr.precision.cpu_bf16_support``): without it bf16 is emulated and slower.

sentence-transformers' own ``backend="onnx"/"openvino"`` is not measured: its packages
(``optimum-onnx``, ``optimum-intel``) do not install beside transformers 5 with torch 2.13.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def source_mean_similarity(pairs: list[tuple[str, str]], cos: np.ndarray) -> float:
    """Mean over sources of the mean cosine of their paraphrases, in % (Table 2's column)."""
    by: dict[str, list[float]] = defaultdict(list)
    for (s, _), c in zip(pairs, cos, strict=True):
        by[s].append(float(c))
    return 100.0 * statistics.fmean(statistics.fmean(v) for v in by.values())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--sources", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--out", default="results/bench/encoder.json")
    ap.add_argument(
        "--variants",
        default="fp32,bf16 autocast,onnx,onnx int8,openvino",
        help="comma-separated subset (fp32 is always run: the others are compared with it); "
        "leave bf16 out on a CPU without native bf16 (emulated, slow)",
    )
    a = ap.parse_args(argv)
    import torch
    from scipy.stats import spearmanr

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from paraamr.corpus import read_corpus
    from paraamr.figures import save_benchmark
    from paraamr.metrics.semantic import AutocastEncoder, cosine_pairs, load_encoder
    from paraamr.precision import cpu_bf16_support
    from paraamr.signature import Signature

    torch.set_num_threads(a.threads)
    records = list(read_corpus(Path(a.data_dir) / "paraphrase" / "parabank-eval",
                               "parabank-eval-parabank1"))[: a.sources]  # fmt: skip
    pairs = [(r.text, p.text) for r in records for p in r.paraphrases]
    distinct = len({x for pair in pairs for x in pair})
    fp32 = load_encoder("minilm", "cpu")
    encoders = {"fp32": fp32, "bf16 autocast": AutocastEncoder(fp32, "cpu")}
    from paraamr.metrics.exported import ExportedEncoder

    wanted = {"fp32", *(v.strip() for v in a.variants.split(","))}
    known = {"fp32", "bf16 autocast", "onnx", "onnx int8", "openvino"}
    if wanted - known:
        ap.error(f"--variants: unknown {sorted(wanted - known)}; choose from {sorted(known)}")
    for name, backend, int8 in (("onnx", "onnx", False), ("onnx int8", "onnx", True),
                                ("openvino", "openvino", False)):  # fmt: skip
        if name not in wanted:
            continue
        try:
            encoders[name] = ExportedEncoder(fp32, backend, int8=int8, threads=a.threads)
        except ImportError as e:  # MissingDependencyError is an ImportError too
            print(f"{name}: left out ({e})", flush=True)
    cosine_pairs(pairs[:8], fp32)  # warm-up
    runs, cos = {}, {}
    for name, enc in encoders.items():
        if name not in wanted:
            continue
        times = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            cos[name] = cosine_pairs(pairs, enc, batch_size=128)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        runs[name] = {
            "sentences_per_s": round(distinct / med, 1),
            "median_s": round(med, 2),
            "table2_similarity": round(source_mean_similarity(pairs, cos[name]), 4),
        }
        if name != "fp32":
            runs[name]["spearman_vs_fp32"] = float(spearmanr(cos["fp32"], cos[name]).statistic)
            runs[name]["max_abs_diff_vs_fp32"] = float(np.abs(cos["fp32"] - cos[name]).max())
            runs[name]["similarity_points_vs_fp32"] = round(
                runs[name]["table2_similarity"] - runs["fp32"]["table2_similarity"], 4
            )
        print(name, json.dumps(runs[name]), flush=True)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "cpu_bf16": cpu_bf16_support(),
        },  # fmt: skip
        "pairs": len(pairs),
        "distinct_sentences": distinct,
        "sources": len(records),
        "runs": runs,
    }
    sig = Signature.build(("bench", "encoder"), ("model", "minilm"), ("sentences", distinct),
                          ("threads", torch.get_num_threads()))  # fmt: skip
    cases = {"MiniLM encode": {k: r["sentences_per_s"] for k, r in runs.items()}}
    save_benchmark(a.out, out, cases, "sentences / s", sig)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
