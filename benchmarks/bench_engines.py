"""Benchmark the engines the trained AMR models decode on, side by side in one run: the
builder's own wrappers (:class:`paraamr.builder.models.TrainedStog`, constrained and capped, on
ParaNMT-small source sentences; :class:`paraamr.builder.models.TrainedGenerator`, no word
4-gram twice, on gold AMR Bank graphs) over the same items with ``hf`` (PyTorch), ``openvino``
f32 and ``openvino`` bf16 (:mod:`paraamr.lms.engines`).

    make bench-engines AMR_MODEL=results/amr/seed0      # results/bench/engines.json + figure

Per stage and engine: items/s (after one warm-up batch; the export and compilation are timed
apart as ``setup_s``), the speed-up over ``hf``, the share of answers identical to ``hf``'s,
and for the parser the share of answers that are graphs (deserialize). The engines alternate
(hf, openvino, hf, ... ``--repeats`` times) and the median counts, so load that changes during
the run touches every engine alike.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: benchmarks.bench_build is its sibling
    sys.path.insert(0, str(ROOT))

ENGINES = {
    "hf": {"name": "hf"},
    "openvino-f32": {"name": "openvino", "precision": "f32"},
    "openvino-bf16": {"name": "openvino", "precision": "bf16"},
}


def run_stage(make, items: list, call: str, engines: list[str], repeats: int) -> dict:
    """Time ``call`` of the wrapper ``make(engine)`` builds, per engine, alternating."""
    wrappers, out = {}, {}
    for name in engines:
        t = time.perf_counter()
        wrappers[name] = make(ENGINES[name])
        getattr(wrappers[name], call)(items[:4])  # warm-up: compile, first allocations
        out[name] = {"setup_s": round(time.perf_counter() - t, 2), "seconds": []}
    answers = {}
    for _ in range(repeats):
        for name in engines:
            t = time.perf_counter()
            answers[name] = getattr(wrappers[name], call)(items)
            out[name]["seconds"].append(round(time.perf_counter() - t, 3))
    base = statistics.median(out["hf"]["seconds"]) if "hf" in out else None
    for name in engines:
        sec = statistics.median(out[name]["seconds"])
        res = out[name]
        res["items_per_s"] = round(len(items) / sec, 3)
        if base:
            res["speedup_vs_hf"] = round(base / sec, 2)
            same = sum(a == b for a, b in zip(answers[name], answers["hf"], strict=True))
            res["identical_to_hf"] = round(same / len(items), 4)
        if call == "parse":
            res["graphs"] = round(sum(a is not None for a in answers[name]) / len(items), 4)
        res["signature"] = wrappers[name].signature()
        print(f"{call} {name}: {res['items_per_s']} items/s, x{res.get('speedup_vs_hf')}, "
              f"identical {res.get('identical_to_hf')}", flush=True)  # fmt: skip
    return out


def main(argv=None) -> None:
    from benchmarks.bench_build import real_graphs
    from benchmarks.bench_decode import paranmt_sources

    shared = str(ROOT.parent / "shared" / "data")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("PARAAMR_DATA", shared))
    ap.add_argument("--amr-model", default="results/amr/seed0", help="make amr-model's folder")
    ap.add_argument("--n", type=int, default=64, help="items per stage (the same for each engine)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--engines",
        default="hf,openvino-f32,openvino-bf16",
        help="comma-separated: hf, openvino-f32, openvino-bf16 (bf16 needs two cores)",
    )
    ap.add_argument("--stages", default="parse,generate")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch threads and OpenVINO inference threads")  # fmt: skip
    ap.add_argument("--out", default="results/bench/engines.json")
    a = ap.parse_args(argv)

    from paraamr.builder.models import TrainedGenerator, TrainedStog
    from paraamr.precision import cpu_bf16_support

    torch.set_num_threads(a.threads)
    engines = a.engines.split(",")
    for name in engines:
        ENGINES[name]["threads"] = a.threads
    data = Path(a.data_dir)
    res = {
        "machine": {
            "cpus": os.cpu_count(),
            "threads": a.threads,
            "platform": platform.platform(),
            "torch": torch.__version__,
            "bf16": cpu_bf16_support()[1],
        },  # fmt: skip
        "amr_model": a.amr_model,
        "n": a.n,
        "repeats": a.repeats,
        "stages": {},
    }
    if "parse" in a.stages:
        sents = paranmt_sources(data, a.n)
        res["stages"]["parse"] = run_stage(
            lambda e: TrainedStog(a.amr_model, device="cpu", engine=e), sents, "parse",
            engines, a.repeats)  # fmt: skip
    if "generate" in a.stages:
        graphs = real_graphs(data, a.n)
        res["stages"]["generate"] = run_stage(
            lambda e: TrainedGenerator(a.amr_model, device="cpu", engine=e), graphs,
            "generate", engines, a.repeats)  # fmt: skip
    from paraamr.figures import save_benchmark
    from paraamr.signature import Signature

    bars = {stage: {name: r["items_per_s"] for name, r in by.items()}
            for stage, by in res["stages"].items()}  # fmt: skip
    sig = Signature.build(("bench", "engines"), ("model", Path(a.amr_model).name),
                          ("cpus", os.cpu_count()), ("threads", a.threads), ("n", a.n))  # fmt: skip
    save_benchmark(a.out, res, bars, "items / s", str(sig),
                   "the trained AMR models: hf vs openvino")  # fmt: skip
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
