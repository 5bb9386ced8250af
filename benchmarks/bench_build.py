"""Benchmark the builder's model stages: batched vs one sentence per call, side by side.

    python benchmarks/bench_build.py --out results/bench/build.json [--n 32] [--device cpu]

Randomly initialised models of the real architectures and sizes (bart-large as the text→AMR
parser, t5-base as the AMR→text generator, gpt2 as the perplexity scorer: the real models' compute
cost), fed token ids of realistic lengths, with fixed generation lengths (``min_new_tokens =
max_new_tokens``) so both ways do the same work. The authors' scripts parsed one sentence per call.
Reports sentences/s per stage and, on GPU, peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

STAGES = {
    # stage: (architecture, input tokens, output tokens)
    "parse (bart-large, text→AMR)": ("bart-large", 24, 48),
    "generate (t5-base, AMR→text)": ("t5-base", 64, 24),
    "perplexity (gpt2)": ("gpt2", 24, 0),
}


def _model(arch: str, device: str, dtype):
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        GPT2Config,
        GPT2LMHeadModel,
        T5Config,
        T5ForConditionalGeneration,
    )

    torch.manual_seed(0)
    if arch == "bart-large":
        cfg = BartConfig(
            vocab_size=50265,
            d_model=1024,
            encoder_layers=12,
            decoder_layers=12,
            encoder_attention_heads=16,
            decoder_attention_heads=16,
            encoder_ffn_dim=4096,
            decoder_ffn_dim=4096,
        )
        m = BartForConditionalGeneration(cfg)
    elif arch == "t5-base":
        m = T5ForConditionalGeneration(
            T5Config(
                vocab_size=32128,
                d_model=768,
                d_ff=3072,
                num_layers=12,
                num_heads=12,
                decoder_start_token_id=0,
            )
        )
    else:
        m = GPT2LMHeadModel(GPT2Config())
    return m.to(device=device, dtype=dtype).eval()


def _run(model, arch, ids, n_out):
    with torch.inference_mode():
        if arch == "gpt2":
            return model(input_ids=ids).logits.shape
        return model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=n_out,
            min_new_tokens=n_out,
            num_beams=1,
            do_sample=False,
        )


def bench_stage(arch, n_in, n_out, n, batch_size, n_single, device, dtype) -> dict:
    model = _model(arch, device, dtype)
    vocab = model.config.vocab_size
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab - 1, (n, n_in), generator=g).to(device)
    _run(model, arch, ids[:2], min(n_out, 2))  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for i in range(0, n, batch_size):
        _run(model, arch, ids[i : i + batch_size], n_out)
    if device == "cuda":
        torch.cuda.synchronize()
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(n_single):
        _run(model, arch, ids[i : i + 1], n_out)
    if device == "cuda":
        torch.cuda.synchronize()
    t_single = time.perf_counter() - t0
    out = {
        "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "in_tokens": n_in,
        "out_tokens": n_out,
        "batch_size": batch_size,
        "batched_sent_per_s": n / t_batched,
        "one_per_call_sent_per_s": n_single / t_single,
        "speedup": (n / t_batched) / (n_single / t_single),
    }
    if device == "cuda":
        out["peak_gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 2**30
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=32, help="sentences per stage (batched)")
    ap.add_argument("--n-single", type=int, default=8, help="sentences one per call")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default=None, help="fp16/bf16 on GPU")
    ap.add_argument("--out", default="results/bench/build.json")
    a = ap.parse_args(argv)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, None: torch.float32}[a.dtype]
    torch.set_num_threads(os.cpu_count() or 1)
    res = {
        "machine": {
            "device": a.device,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "torch": torch.__version__,
            "dtype": str(dtype),
            "gpu": torch.cuda.get_device_name() if a.device == "cuda" else None,
        },
        "stages": {},
    }
    for stage, (arch, n_in, n_out) in STAGES.items():
        r = bench_stage(arch, n_in, n_out, a.n, a.batch_size, a.n_single, a.device, dtype)
        res["stages"][stage] = r
        print(stage, json.dumps(r), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
