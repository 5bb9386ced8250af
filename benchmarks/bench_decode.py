"""Benchmark greedy decoding of the AMR models trained here: ``model.generate`` against the
decoding that drops finished rows (:func:`paraamr.lms.greedy.greedy_compact`), at two batch
sizes, side by side in one run.

    python benchmarks/bench_decode.py --amr-model results/amr/grouped \
        --out results/bench/decode.json

Each stage runs the builder's own wrapper (:class:`paraamr.builder.models.TrainedStog`,
constrained and capped, on ParaNMT-small source sentences;
:class:`paraamr.builder.models.TrainedGenerator` on gold AMR Bank graphs) once per variant over
the same ``--n`` items: ``model.generate`` in batches of 16 (the wrappers' batch size before),
the compact decoding in batches of 16, ``model.generate`` and the compact decoding in batches of
``--big-batch``, and the compact decoding in batches of ``--big-batch`` on bf16 weights
(fast where the CPU has AVX512-BF16 or AMX, emulated and slow elsewhere: ``machine.bf16``).
A hook on the output layer counts the rows the model ran (``model_rows``: decoder steps × rows
in the batch), and every variant's answers are compared with the first's (``same_answers``).
``step_ms``: the milliseconds of one cached decoding step of the parser's model at batch
sizes 1, 16 and 64, in fp32, then under bf16 autocast over the fp32 weights
(``step_ms_autocast``) and on bf16 weights (``step_ms_bf16``); ``--stages step`` times only
these.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: benchmarks.bench_build is its sibling
    sys.path.insert(0, str(ROOT))


@contextlib.contextmanager
def hf_generate_only():
    """Inside: every generate_ids call goes through ``model.generate``."""
    from paraamr.training.condgen import CondGenModule

    real = CondGenModule._compact_greedy
    CondGenModule._compact_greedy = lambda self, kwargs: False
    try:
        yield
    finally:
        CondGenModule._compact_greedy = real


def paranmt_sources(data: Path, n: int) -> list[str]:
    """The first ``n`` non-empty ParaNMT-small validation sources."""
    path = data / "paraphrase" / "qqppos-paranmt-small" / "para" / "valid_src.txt"
    lines = [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[:n]


def variants(big: int) -> list[tuple[str, int, bool, str]]:
    """(label, batch size, compact, precision) in the order they run; the first is the
    reference.

    >>> [v[0] for v in variants(64)][2:]
    ['model.generate, batch 64', 'compact, batch 64', 'compact, batch 64, bf16']
    """
    fp32 = [(f"{'compact' if c else 'model.generate'}, batch {b}", b, c, "fp32")
            for b in (16, big) for c in (False, True)]  # fmt: skip
    return [*fp32, (f"compact, batch {big}, bf16", big, True, "bf16")]


def run_stage(wrapper, fn, items, counter, big: int) -> dict:
    """Seconds, items/s, model rows and agreement with the reference, per variant."""
    out, ref = {}, None
    for label, batch, compact, precision in variants(big):
        wrapper.batch_size = batch
        wrapper.module.set_precision(precision)
        counter.rows = 0
        ctx = contextlib.nullcontext() if compact else hf_generate_only()
        with ctx:
            t0 = time.perf_counter()
            answers = fn(list(items))
            dt = time.perf_counter() - t0
        weights = str(next(wrapper.module.model.parameters()).dtype).removeprefix("torch.")
        wrapper.module.set_precision("fp32")
        answers = [a if isinstance(a, str) else json.dumps(a, default=str) for a in answers]
        ref = answers if ref is None else ref
        out[label] = {
            "seconds": round(dt, 2),
            "items_per_s": round(len(items) / dt, 3),
            "model_rows": counter.rows,
            "same_answers": sum(a == b for a, b in zip(answers, ref, strict=True)),
            "weights": weights,  # the dtype the variant decoded with
        }
        print(label, json.dumps(out[label]), flush=True)
    return out


def step_costs(model, rows=(1, 16, 64), context: int = 30, steps: int = 10,
               precision: str = "fp32") -> dict[str, float]:  # fmt: skip
    """Milliseconds of one cached decoding step of ``model`` per batch size: the mean of
    ``steps`` steps after a ``context``-token prompt of random ids, in ``precision``."""
    from paraamr.lms.greedy import _cache_of, _forward_names
    from paraamr.precision import resolve

    name, last_only = _forward_names(model)
    out = {}
    with torch.no_grad(), resolve(precision).context():  # bf16: autocast
        for b in rows:
            ids = torch.randint(0, model.config.vocab_size, (b, context))
            cache = _cache_of(model(input_ids=ids, use_cache=True, **last_only))
            t0 = time.perf_counter()
            for _ in range(steps):
                nxt = torch.randint(0, model.config.vocab_size, (b, 1))
                cache = _cache_of(
                    model(input_ids=nxt, use_cache=True, **last_only, **{name: cache})
                )
            out[f"batch {b}"] = round((time.perf_counter() - t0) / steps * 1000, 1)
    return out


def bars(res: dict) -> dict[str, dict[str, float]]:
    """Items/s per stage and variant, for the figure.

    >>> bars({"stages": {"parse": {"a": {"items_per_s": 1.0}, "b": {"items_per_s": 2.0}}}})
    {'parse': {'a': 1.0, 'b': 2.0}}
    """
    return {s: {v: r["items_per_s"] for v, r in vs.items()} for s, vs in res["stages"].items()}


def main(argv=None) -> None:
    from benchmarks.bench_build import StepCounter, real_graphs

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = ROOT.parent / "shared" / "data"
    ap.add_argument("--data-dir", default=os.environ.get("PARAAMR_DATA", shared))
    ap.add_argument("--amr-model", default="results/amr/grouped",
                    help="experiments/train_amr.py out_dir")  # fmt: skip
    ap.add_argument("--n", type=int, default=64, help="items per stage (the same for each variant)")
    ap.add_argument("--big-batch", type=int, default=64)
    ap.add_argument("--stages", default="step,parse,generate")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--out", default="results/bench/decode.json")
    a = ap.parse_args(argv)
    from paraamr.builder.models import TrainedGenerator, TrainedStog
    from paraamr.precision import cpu_bf16_support

    torch.set_num_threads(a.threads)
    data = Path(a.data_dir)
    res = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
            "torch": torch.__version__,
            "bf16": cpu_bf16_support()[1],  # native (AVX512-BF16 / AMX) or emulated
        },
        "amr_model": a.amr_model,
        "n": a.n,
        "stages": {},
    }
    stages = a.stages.split(",")
    if "parse" in stages:
        stog = TrainedStog(a.amr_model, device="cpu")
        sents = paranmt_sources(data, a.n)
        counter = StepCounter(stog.module.model.lm_head)
        res["stages"]["parse"] = run_stage(stog, stog.parse, sents, counter, a.big_batch)
    if "step" in stages:  # one decoding step's cost by batch size, the parser's model
        if "parse" not in stages:
            stog = TrainedStog(a.amr_model, device="cpu")
        res["step_ms"] = step_costs(stog.module.model)
        res["step_ms_autocast"] = step_costs(stog.module.model, precision="bf16")
        stog.module.set_precision("bf16")  # the weights, as dtype: bf16 decodes
        res["step_ms_bf16"] = step_costs(stog.module.model)
        stog.module.set_precision("fp32")
        print("step ms", {k: res[k] for k in res if k.startswith("step_ms")}, flush=True)
    if "generate" in stages:
        gen = TrainedGenerator(a.amr_model, device="cpu")
        graphs = real_graphs(data, a.n)
        counter = StepCounter(gen.module.model.lm_head)
        res["stages"]["generate"] = run_stage(gen, gen.generate, graphs, counter, a.big_batch)
    from paraamr.figures import save_benchmark
    from paraamr.signature import Signature
    from paraamr.utils import write_json_atomic

    if not res["stages"]:  # --stages step: the step costs alone, no figure
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(a.out, res, sort_keys=False)
    else:
        sig = Signature.build(("bench", "decode"), ("model", a.amr_model),
                              ("cpus", os.cpu_count()), ("n", a.n))  # fmt: skip
        save_benchmark(a.out, res, bars(res), "items / s", str(sig),
                       "greedy decoding: model.generate vs finished rows dropped")  # fmt: skip
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
