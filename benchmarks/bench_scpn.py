"""Benchmark the SCPN recipe on this machine: seconds per training step of the project's own
``SCPNModule`` in four variants side by side (fp32 with every layer trained, bf16 autocast, the
embeddings and lowest ``--freeze`` blocks frozen, both), and generation sentences/s (fp32 vs
bf16, greedy, batched vs one per call).

    python benchmarks/bench_scpn.py --out results/bench/scpn.json
    python benchmarks/bench_scpn.py --models bart,smollm2      # + a random-init bart-base
    python benchmarks/bench_scpn.py --models tiny --steps 1 --sentences 4 --repeats 1   # smoke

Training: ``training_step`` + backward + Adam on real MSRP-train pairs in the offline default
layout (``skeleton`` prompt, template-infilling tree answers, spaCy parses), the same batches for
every variant, median of ``--steps`` steps after one warm-up step; bf16 is
``torch.autocast("cpu", torch.bfloat16)`` as Lightning's ``bf16-mixed`` does. Whether the CPU
runs bf16 natively is in the output (``paraamr.precision.cpu_bf16_support``): without it,
bf16 is emulated and training falls back to fp32. Generation: a fixed output length
(``min_new_tokens = max_new_tokens = --new-tokens``), median of ``--repeats``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def _random_bart_base(tmp: Path) -> str:
    """bart-base's architecture with random weights (SmolLM2's tokenizer: ~49k tokens)."""
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    from paraamr.lms.smollm2 import ensure_dequantized

    tok = AutoTokenizer.from_pretrained(ensure_dequantized())
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    cfg = BartConfig(
        vocab_size=len(tok), d_model=768, encoder_layers=6, decoder_layers=6,
        encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
        decoder_ffn_dim=3072, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    BartForConditionalGeneration(cfg).save_pretrained(tmp)
    tok.save_pretrained(tmp)
    return str(tmp)


def _pairs(n: int, data_dir: str | Path):
    from paraamr.parsers.spacy_backend import SpacyParser
    from paraamr.scpn.pairs import build_pairs

    data = Path(data_dir) / "paraphrase" / "msrp" / "msr-para-train.tsv"
    ps = build_pairs(data, "msrp", parser=SpacyParser(), identity=False, dev_sources=1,
                     limit_sources=n + 1)  # fmt: skip
    return ps.train[:n]


VARIANTS = (("fp32 full", False, False), ("bf16", True, False), ("frozen", False, True),
            ("bf16 + frozen", True, True))  # fmt: skip


def _autocast(bf16: bool):
    import contextlib

    return torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def bench(
    model: str, pairs, batch_size: int, steps: int, new_tokens: int, n_gen: int, repeats: int,
    freeze: int,
    target_len: int = 128,
    variants: tuple[str, ...] = tuple(v[0] for v in VARIANTS),
    bf16_steps: int | None = None,
    gen_bf16: bool = True,
) -> list[dict]:  # fmt: skip
    """One row per variant: median seconds per training step; then generation rows."""
    from paraamr.scpn.module import SCPNModule

    rows = []
    for name, bf16, frozen in VARIANTS:
        if name not in variants:
            continue
        torch.manual_seed(0)
        m = SCPNModule(model, input_format="skeleton", output_format="tree", num_beams=1,
                       max_target_length=target_len,
                       freeze_layers=freeze if frozen else None)  # fmt: skip
        m.log = lambda *a, **k: None  # no Trainer attached: logging is a no-op here
        opt = torch.optim.Adam([p for p in m.model.parameters() if p.requires_grad], lr=1e-4)
        batches = [m.encoder.batch(pairs[i : i + batch_size])
                   for i in range(0, len(pairs), batch_size)]  # fmt: skip

        def step(k: int, m=m, opt=opt, batches=batches, bf16=bf16) -> float:
            t0 = time.perf_counter()
            with _autocast(bf16):
                loss = m.training_step(batches[k % len(batches)], k)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return time.perf_counter() - t0

        m.model.train()
        step(0)  # warm-up
        n = bf16_steps if bf16 and bf16_steps else steps
        step_s = statistics.median(step(k) for k in range(1, n + 1))
        rows.append({
            "kind": "train", "variant": name, "arch": m.arch,
            "trainable_params_m": round(m.freeze_stats["trainable"] / 1e6, 1),
            "params_m": round(m.freeze_stats["total"] / 1e6, 1),
            "tokens_per_batch": int(batches[0]["input_ids"].numel()),
            "median_s_per_step": round(step_s, 3), "steps_timed": n,
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    base = next((r["median_s_per_step"] for r in rows if r["variant"] == "fp32 full"), None)
    for r in rows:
        if base:
            r["speedup_vs_fp32_full"] = round(base / r["median_s_per_step"], 2)
    segs = [m.encoder.segments(p) for p in pairs[:n_gen]]
    kw = {"num_beams": 1, "max_new_tokens": new_tokens, "min_new_tokens": new_tokens,
          "do_sample": False, "pad_token_id": m.tokenizer.pad_token_id}  # fmt: skip
    m.model.eval()

    def gen(s, bf16):
        with torch.no_grad(), _autocast(bf16):
            m.model.generate(**m.encoder.prompts(s), **kw)

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    for bf16 in (False, True) if gen_bf16 else (False,):
        batched = statistics.median(timed(lambda b=bf16: gen(segs, b)) for _ in range(repeats))
        single = statistics.median(
            timed(lambda b=bf16: [gen([s], b) for s in segs]) for _ in range(repeats)
        )
        rows.append({
            "kind": "generate", "variant": "bf16" if bf16 else "fp32", "arch": m.arch,
            "new_tokens": new_tokens,
            "batched_sentences_per_s": round(n_gen / batched, 3),
            "one_per_call_sentences_per_s": round(n_gen / single, 3),
            "batched_speedup": round(single / batched, 2),
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def bars(out: dict) -> dict[str, dict[str, float]]:
    """Seconds per training step of each recipe variant, per model (lower is faster)."""
    cases: dict[str, dict[str, float]] = {}
    for r in out["results"]:
        if r["kind"] == "train":
            cases.setdefault(r["model"], {})[r["variant"]] = r["median_s_per_step"]
    return cases


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/bench/scpn.json")
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--models", default="smollm2", help="smollm2, bart, tiny (comma list)")
    ap.add_argument(
        "--variants",
        default=",".join(v[0] for v in VARIANTS),
        help="comma list of: " + ", ".join(v[0] for v in VARIANTS),
    )
    ap.add_argument(
        "--bf16-steps",
        type=int,
        default=None,
        help="timed steps of the bf16 variants (default --steps; emulated bf16 is slow)",
    )
    ap.add_argument("--freeze", type=int, default=20, help="blocks frozen in the frozen variants")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--repeats", type=int, default=3, help="generation timings: median of N")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    a = ap.parse_args(argv)
    from paraamr.precision import cpu_bf16_support
    from paraamr.utils import cpu_model

    torch.set_num_threads(a.threads)
    pairs = _pairs(max(a.batch_size, a.sentences), a.data_dir)
    results: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            if name == "bart":
                path = _random_bart_base(Path(tmp) / "bart")
            elif name == "tiny":
                from paraamr.testing.tiny_models import build_tiny_causal_lm

                path = str(build_tiny_causal_lm(Path(tmp) / "tiny"))
            else:
                path = name
            label = {"bart": "bart-base (random init)", "tiny": "tiny-gpt2"}.get(name, name)
            freeze = 1 if name == "tiny" else 3 if name == "bart" else a.freeze
            for r in bench(path, pairs, a.batch_size, a.steps, a.new_tokens, a.sentences,
                           a.repeats, freeze, 24 if name == "tiny" else 128,
                           tuple(a.variants.split(",")), a.bf16_steps,
                           any(v.startswith("bf16") for v in a.variants.split(","))):  # fmt: skip
                r["model"] = label
                results.append(r)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "load_average_at_start": os.getloadavg(),
            "cpu_bf16": cpu_bf16_support(),
            "cpu_model": cpu_model(),
        },
        "settings": vars(a),
        "results": results,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=2))
    from paraamr.figures import save_bars
    from paraamr.signature import Signature

    m = out["machine"]
    sig = Signature.build(("bench", "scpn"), ("cpus", m["cpus"]), ("threads", m["torch_threads"]),
                          ("batch", a.batch_size))  # fmt: skip
    title = f"one training step, batch {a.batch_size} (lower is faster)"
    save_bars(Path(a.out).with_suffix(""), bars(out), "seconds / step", sig, title)


if __name__ == "__main__":
    main()
