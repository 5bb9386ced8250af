"""Benchmark the engines the trained AMR models decode on, side by side in one run: the
builder's own wrappers (:class:`paraamr.builder.models.TrainedStog`, constrained and capped, on
ParaNMT-small source sentences; :class:`paraamr.builder.models.TrainedGenerator` on gold AMR
Bank graphs) over the same items with ``hf`` (PyTorch), ``openvino`` f32 / bf16 and ``genai``
f32 / bf16 (OpenVINO GenAI's pipeline; :mod:`paraamr.lms.engines`).

    make bench-engines AMR_MODEL=results/amr/seed0      # results/bench/engines.json + figure

Each arm is an engine and a decoding: the parser under its default ``brackets`` constraint or
the graph grammar (``-grammar``; ``genai`` always runs the grammar), the generator with its
no-repeat rule or without it (``-free``; ``genai``'s greedy search has none). Per stage and
arm: items/s (after one warm-up batch; the export and compilation are timed apart as
``setup_s``), the speed-up over ``hf``, the share of answers identical to ``hf``'s and to the
``hf`` arm of the same decoding (``ref``), and for the parser the share of answers that are
graphs (deserialize). The arms alternate (``--repeats`` rounds) and the median counts, so load
that changes during the run touches every arm alike.
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
    "genai-f32": {"name": "genai", "precision": "f32"},
    "genai-bf16": {"name": "genai", "precision": "bf16"},
}
#: per stage, the decoding an arm's suffix asks for, and the hf arm of that decoding
DECODINGS = {
    "parse": {"grammar": {"constraint": "grammar"}},
    "generate": {"free": {"no_repeat_words": None}},
}
#: what genai always runs, per stage
GENAI_DECODING = {"parse": "grammar", "generate": "free"}


def arm(name: str, stage: str) -> tuple[dict, dict, str]:
    """An arm's engine settings, its wrapper's decoding keywords and its reference arm.

    >>> arm("openvino-f32-grammar", "parse")
    ({'name': 'openvino', 'precision': 'f32'}, {'constraint': 'grammar'}, 'hf-grammar')
    >>> arm("genai-bf16", "generate")
    ({'name': 'genai', 'precision': 'bf16'}, {'no_repeat_words': None}, 'hf-free')
    """
    other = GENAI_DECODING[stage]
    base, marked, _ = name.partition(f"-{other}")
    suffix = other if marked or base.startswith("genai") else ""
    if base not in ENGINES:
        raise SystemExit(f"bench-engines: unknown engine {name!r} (known: {sorted(ENGINES)})")
    kw = DECODINGS[stage].get(suffix, {}) if suffix else {}
    return dict(ENGINES[base]), dict(kw), "hf" + (f"-{suffix}" if suffix else "")


def run_stage(make, items: list, call: str, engines: list[str], repeats: int) -> dict:
    """Time ``call`` of the wrapper ``make(engine, **decoding)`` builds, per arm, alternating."""
    stage = call
    names = list(engines)
    for name in engines:  # every arm's reference runs too
        ref = arm(name, stage)[2]
        if ref not in names:
            names.insert(0, ref)
    wrappers, out = {}, {}
    for name in names:
        engine, kw, _ = arm(name, stage)
        t = time.perf_counter()
        wrappers[name] = make(engine, **kw)
        getattr(wrappers[name], call)(items[:4])  # warm-up: compile, first allocations
        if hasattr(getattr(wrappers[name], "module", None), "redone"):
            wrappers[name].module.redone = 0  # count the timed runs only
        out[name] = {"setup_s": round(time.perf_counter() - t, 2), "seconds": []}
    answers = {}
    for _ in range(repeats):
        for name in names:
            t = time.perf_counter()
            answers[name] = getattr(wrappers[name], call)(items)
            out[name]["seconds"].append(round(time.perf_counter() - t, 3))
    base = statistics.median(out["hf"]["seconds"]) if "hf" in out else None
    for name in names:
        sec = statistics.median(out[name]["seconds"])
        res = out[name]
        res["items_per_s"] = round(len(items) / sec, 3)
        ref = arm(name, stage)[2]
        res["ref"] = ref
        same = sum(a == b for a, b in zip(answers[name], answers[ref], strict=True))
        res["identical_to_ref"] = round(same / len(items), 4)
        if base:
            res["speedup_vs_hf"] = round(base / sec, 2)
            same = sum(a == b for a, b in zip(answers[name], answers["hf"], strict=True))
            res["identical_to_hf"] = round(same / len(items), 4)
        if call == "parse":
            res["graphs"] = round(sum(a is not None for a in answers[name]) / len(items), 4)
        res["signature"] = wrappers[name].signature()
        module = getattr(wrappers[name], "module", None)
        if getattr(module, "engine_pipeline", None) is not None and call == "generate":
            # answers the no-repeat rule changed, decoded again in the project's loop
            res["redone_share"] = round(module.redone / (repeats * len(items)), 4)
        print(f"{call} {name}: {res['items_per_s']} items/s, x{res.get('speedup_vs_hf')}, "
              f"identical to hf {res.get('identical_to_hf')}, to {ref} {res['identical_to_ref']}",
              flush=True)  # fmt: skip
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
        default="hf,openvino-f32,openvino-bf16,genai-f32,genai-bf16",
        help="comma-separated arms: an engine (hf, openvino-f32, openvino-bf16, genai-f32, "
        "genai-bf16; bf16 needs two cores), with -grammar (parse) or -free (generate) for the "
        "other decoding; each arm's hf reference runs too",
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
    for e in ENGINES.values():
        e["threads"] = a.threads
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
            lambda e, **kw: TrainedStog(a.amr_model, device="cpu", engine=e, **kw), sents, "parse",
            engines, a.repeats)  # fmt: skip
    if "generate" in a.stages:
        graphs = real_graphs(data, a.n)
        res["stages"]["generate"] = run_stage(
            lambda e, **kw: TrainedGenerator(a.amr_model, device="cpu", engine=e, **kw), graphs,
            "generate", engines, a.repeats)  # fmt: skip
    from paraamr.figures import save_benchmark
    from paraamr.signature import Signature

    bars = {stage: {name: r["items_per_s"] for name, r in by.items()}
            for stage, by in res["stages"].items()}  # fmt: skip
    sig = Signature.build(("bench", "engines"), ("model", Path(a.amr_model).name),
                          ("cpus", os.cpu_count()), ("threads", a.threads), ("n", a.n))  # fmt: skip
    save_benchmark(a.out, res, bars, "items / s", str(sig),
                   "the trained AMR models: hf vs openvino vs genai")  # fmt: skip
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
