"""Benchmark SCPN training and generation throughput on this machine: a randomly initialised
bart-base (the paper's architecture and size) and the offline default (SmolLM2-135M).

    python benchmarks/bench_scpn.py --out results/bench/scpn.json
    python benchmarks/bench_scpn.py --models tiny --steps 1 --sentences 4 --repeats 1   # smoke

Training: the project's ``SCPNModule.training_step`` + backward + Adam step on real MSRP-train
pairs in the ``scpn`` input format (with spaCy target parses), the same batch for both models,
median of ``--steps`` steps after one warm-up step. Generation: beam 4 with a fixed output
length (``min_new_tokens = max_new_tokens = --new-tokens``), batched
(one call for all ``--sentences``) vs one sentence per call, median of ``--repeats``.
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


def _pairs(n: int):
    from paraamr.parsers.spacy_backend import SpacyParser
    from paraamr.scpn.pairs import build_pairs

    data = ROOT.parent / "shared" / "data" / "paraphrase" / "msrp" / "msr-para-train.tsv"
    ps = build_pairs(data, "msrp", parser=SpacyParser(), identity=False, dev_sources=1,
                     limit_sources=n + 1)  # fmt: skip
    return ps.train[:n]


def bench(
    model: str, pairs, batch_size: int, steps: int, new_tokens: int, n_gen: int, repeats: int
) -> dict:
    """Median seconds per training step (the module's own ``training_step`` + backward + Adam)
    and median seconds for generating ``n_gen`` sentences batched vs one per call."""
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(model, input_format="scpn", num_beams=4)
    m.log = lambda *a, **k: None  # no Trainer attached: logging is a no-op here
    opt = torch.optim.Adam(m.model.parameters(), lr=3e-5)
    batches = [m.encoder.batch(pairs[i : i + batch_size]) for i in range(0, len(pairs), batch_size)]

    def step(k: int) -> float:
        t0 = time.perf_counter()
        m.training_step(batches[k % len(batches)], k).backward()
        opt.step()
        opt.zero_grad()
        return time.perf_counter() - t0

    m.model.train()
    step(0)  # warm-up
    step_s = statistics.median(step(k) for k in range(steps))
    segs = [m.encoder.segments(p) for p in pairs[:n_gen]]
    kw = {"num_beams": 4, "max_new_tokens": new_tokens, "min_new_tokens": new_tokens}
    m.model.eval()

    def gen(s):
        with torch.no_grad():
            m.model.generate(**m.encoder.prompts(s), **kw, pad_token_id=m.tokenizer.pad_token_id)

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    batched = statistics.median(timed(lambda: gen(segs)) for _ in range(repeats))
    single = statistics.median(timed(lambda: [gen([s]) for s in segs]) for _ in range(repeats))
    return {
        "arch": m.arch,
        "params_m": round(sum(p.numel() for p in m.model.parameters()) / 1e6, 1),
        "train_sentences_per_s": round(batch_size / step_s, 3),
        "train_median_s_per_step": round(step_s, 3),
        "gen_batched_sentences_per_s": round(n_gen / batched, 3),
        "gen_one_per_call_sentences_per_s": round(n_gen / single, 3),
        "batched_speedup": round(single / batched, 2),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/bench/scpn.json")
    ap.add_argument("--models", default="bart,smollm2", help="bart, smollm2, tiny (comma list)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3, help="generation timings: median of N")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    pairs = _pairs(max(a.batch_size, a.sentences))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            if name == "bart":
                path = _random_bart_base(Path(tmp) / "bart")
            elif name == "tiny":
                from paraamr.testing.tiny_models import build_tiny_causal_lm

                path = str(build_tiny_causal_lm(Path(tmp) / "tiny"))
            else:
                path = name
            r = bench(path, pairs, a.batch_size, a.steps, a.new_tokens, a.sentences, a.repeats)
            r["model"] = {"bart": "bart-base (random init)", "tiny": "tiny-gpt2"}.get(name, name)
            print(json.dumps(r))
            results.append(r)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "load_average_at_start": os.getloadavg(),
        },
        "settings": vars(a),
        "results": results,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
