"""Benchmark the builder's model stages as the builder calls them: batched vs one per call.

    python benchmarks/bench_build.py --out results/bench/build.json [--n 16] [--threads 1]
    python benchmarks/bench_build.py --models trained --amr-model results/amr/seed0 \
        --out results/bench/build-trained.json

Each stage runs the project's own wrapper on real, variable-length inputs from the shared data:

- parse: :class:`paraamr.builder.models.AmrlibStog` (amrlib ``parse_xfm``) on ParaBank-Eval
  source sentences (5-40 words);
- generate: :class:`paraamr.builder.models.AmrlibGenerator` (amrlib ``generate_xfm``) on gold
  AMR graphs of the AMR Bank (The Little Prince);
- perplexity: :class:`paraamr.lms.CausalLMScorer` with the real SmolLM2-135M weights
  (``lm=smollm2``) on the same sentences.

The amrlib model dirs have the real models' sizes (bart-large for the parser, t5-base for the
generator, vocabularies included) with random weights (std 0.02 / 0.05: larger ones overflow into
slow denormal arithmetic), built in amrlib's on-disk format by
:mod:`paraamr.testing.tiny_models` (the real checkpoints cannot be downloaded here). Random
weights rarely emit end-of-sequence, so generation runs to ``max_out_len`` on both sides; a hook
on the output layer counts the decoder steps each side ran (``decoder_steps_per_item``), which
shows both did the same work. One-per-call is how the authors' scripts parsed. Rates are the
median of ``--repeats`` runs over the same ``--n`` items on both sides.

``--models trained`` times the AMR models trained here instead (:mod:`paraamr.amrlm`, the
offline defaults of the builder): :class:`paraamr.builder.models.TrainedStog` (constrained,
capped decoding) and :class:`paraamr.builder.models.TrainedGenerator` from ``--amr-model``,
with their real weights, so the decoder stops where the model ends its answer.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]

BART_LARGE = {  # facebook/bart-large (amrlib parse_xfm_bart_large)
    "vocab_size": 50265,
    "d_model": 1024,
    "encoder_layers": 12,
    "decoder_layers": 12,
    "encoder_attention_heads": 16,
    "decoder_attention_heads": 16,
    "encoder_ffn_dim": 4096,
    "decoder_ffn_dim": 4096,
}
T5_BASE = {  # t5-base (amrlib generate_t5wtense)
    "vocab_size": 32128,
    "d_model": 768,
    "d_kv": 64,
    "d_ff": 3072,
    "num_layers": 12,
    "num_decoder_layers": 12,
    "num_heads": 12,
    "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128,
}


def real_sentences(data: Path, n: int, seed: int = 0) -> list[str]:
    """``n`` distinct ParaBank-Eval source sentences, a seeded sample (variable length)."""
    from paraamr.corpus import read_corpus

    srcs = sorted(
        {
            r.text
            for r in read_corpus(data / "paraphrase" / "parabank-eval", "parabank-eval-parabank1")
        }
    )
    return random.Random(seed).sample(srcs, n)


def real_graphs(data: Path, n: int, seed: int = 0) -> list[str]:
    """``n`` gold AMR graphs (PENMAN, no metadata) of the AMR Bank, a seeded sample."""
    import penman

    from paraamr.amr.io import read_penman_blocks

    graphs = [
        penman.encode(b.graph, indent=None)
        for b in read_penman_blocks(data / "amr" / "amr-bank-struct-v3.0.txt")
        if b.graph is not None
    ]
    return random.Random(seed).sample(graphs, n)


class StepCounter:
    """Counts rows through a module's forward (decoder steps x batch rows at the output layer)."""

    def __init__(self, module: torch.nn.Module):
        self.rows = 0
        module.register_forward_hook(self._hook)

    def _hook(self, _module, _inputs, output) -> None:
        self.rows += output.shape[0] * (output.shape[1] if output.dim() == 3 else 1)


def time_stage(
    fn: Callable[[list], object], items: Sequence, counter: StepCounter | None, repeats: int
) -> dict:
    """Median seconds of ``fn(all items)`` (batched inside the wrapper) and of one call per item."""
    fn(list(items[:2]))  # warm-up
    sides = {}
    for side in ("batched", "one_per_call"):
        times, rows = [], 0
        for _ in range(repeats):
            if counter is not None:
                counter.rows = 0
            t0 = time.perf_counter()
            if side == "batched":
                fn(list(items))
            else:
                for x in items:
                    fn([x])
            times.append(time.perf_counter() - t0)
            rows = counter.rows if counter is not None else 0
        med = statistics.median(times)
        sides[side] = {
            "median_s": med,
            "runs_s": times,
            "items_per_s": len(items) / med,
            **({"decoder_steps_per_item": rows / len(items)} if counter is not None else {}),
        }
    sides["speedup"] = sides["batched"]["items_per_s"] / sides["one_per_call"]["items_per_s"]
    return sides


def bars(res: dict) -> dict[str, dict[str, float]]:
    """Items per second of each builder stage, one call per item beside batched."""
    return {
        name: {
            "one per call": r["one_per_call"]["items_per_s"],
            "batched": r["batched"]["items_per_s"],
        }
        for name, r in res["stages"].items()
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--n", type=int, default=16, help="items per stage (same on both sides)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--parse-out-len", type=int, default=48, help="amrlib max_out_len (graph)")
    ap.add_argument("--generate-out-len", type=int, default=24, help="max_out_len (sentence)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", default="results/bench/build.json")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--models", default="amrlib", choices=("amrlib", "trained"),
                    help="amrlib: random, real sizes; trained: --amr-model")  # fmt: skip
    ap.add_argument("--amr-model", default="results/amr/seed0",
                    help="experiments/train_amr.py out_dir (with --models trained)")  # fmt: skip
    a = ap.parse_args(argv)
    from paraamr.lms import load_scorer

    torch.set_num_threads(a.threads)
    data = Path(a.data_dir)
    sents, graphs = real_sentences(data, a.n), real_graphs(data, a.n)
    res = {
        "machine": {
            "device": a.device,
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name() if a.device == "cuda" else None,
        },
        "n": a.n,
        "repeats": a.repeats,
        "batch_size": a.batch_size,
        "input_words": {
            "sentences_mean": statistics.mean(len(s.split()) for s in sents),
            "sentences_range": [
                min(len(s.split()) for s in sents),
                max(len(s.split()) for s in sents),
            ],
            "graph_tokens_mean": statistics.mean(len(g.split()) for g in graphs),
        },
        "models": a.models,
        "stages": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        lm = load_scorer("smollm2", batch_size=a.batch_size, device=a.device)
        ppl = ("perplexity (CausalLMScorer, SmolLM2-135M real weights)", lm.perplexities, sents)
        if a.models == "trained":
            stages = trained_stages(a.amr_model, a.batch_size, a.device, sents, graphs)
        else:
            stages = amrlib_stages(Path(tmp), a, sents, graphs)
        stages[ppl[0]] = (ppl[1], ppl[2], None)
        for name, (fn, items, counter) in stages.items():
            r = time_stage(fn, items, counter, a.repeats)
            res["stages"][name] = r
            print(name, json.dumps({k: v for k, v in r.items() if k != "runs_s"}), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2))
    from paraamr.figures import save_bars
    from paraamr.signature import Signature

    sig = Signature.build(("bench", "build"), ("models", a.models), ("cpus", os.cpu_count()),
                          ("n", a.n))  # fmt: skip
    title = "builder stages: one call per item vs batched"
    save_bars(Path(a.out).with_suffix(""), bars(res), "items / s", sig, title)
    print(f"wrote {a.out}")


def trained_stages(amr_model: str, batch_size: int, device: str, sents, graphs) -> dict:
    """The builder's offline stages: the AMR models trained here, real weights."""
    from paraamr.builder.models import TrainedGenerator, TrainedStog

    stog = TrainedStog(amr_model, batch_size=batch_size, device=device)
    gen = TrainedGenerator(amr_model, batch_size=batch_size, device=device)
    return {
        "parse (TrainedStog, SmolLM2-135M trained here)": (
            stog.parse, sents, StepCounter(stog.module.model.lm_head)),
        "generate (TrainedGenerator, SmolLM2-135M trained here)": (
            gen.generate, graphs, StepCounter(gen.module.model.lm_head)),
    }  # fmt: skip


def amrlib_stages(tmp: Path, a: argparse.Namespace, sents, graphs) -> dict:
    """amrlib's parser and generator wrappers on random models of the real models' sizes."""
    from paraamr.builder.models import AmrlibGenerator, AmrlibStog
    from paraamr.testing.tiny_models import build_tiny_gtos, build_tiny_stog

    stog = AmrlibStog(
        str(
            build_tiny_stog(
                Path(tmp) / "stog", init_std=0.02, arch=BART_LARGE, max_out_len=a.parse_out_len
            )
        ),
        batch_size=a.batch_size,
        device=a.device,
    )
    gen = AmrlibGenerator(
        str(
            build_tiny_gtos(
                Path(tmp) / "gtos", init_std=0.05, arch=T5_BASE, max_out_len=a.generate_out_len
            )
        ),
        batch_size=a.batch_size,
        device=a.device,
    )
    return {
        "parse (AmrlibStog, bart-large size, random)": (
            stog.parse,
            sents,
            StepCounter(stog.inference.model.lm_head),
        ),
        "generate (AmrlibGenerator, t5-base size, random)": (
            gen.generate,
            graphs,
            StepCounter(gen.inference.model.lm_head),
        ),
    }


if __name__ == "__main__":
    main()
