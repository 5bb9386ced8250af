"""One GPU check, ready to run: what the suite's heavy parts do per second on a CUDA GPU.

    python benchmarks/gpu_check.py --out results/bench/gpu_check.json     # make gpu-check

Writes one JSON (and prints it) with, for the device it runs on:

- ``encode``: sentence-encoder throughput of the Table 2 similarity path (``cosine_pairs``,
  batch 128) with the packaged MiniLM and a randomly initialised bert-base, in pairs/s;
- ``builder``: batched vs one-per-call items/s of the builder's three model kinds with random
  weights of the paper's sizes: a bart-large seq2seq (the AMR parser), a t5-base seq2seq (the
  generator), greedy, and a gpt2 LM scoring (perplexity forward);
- ``train``: optimizer steps/s at the paper's batch sizes (SCPN and TOP: bart-base, batch 32;
  SimCSE: bert-base, batch 128 triplets, the project's loss), fp32 and, where the GPU has it,
  bf16 autocast;
- ``peak_memory_mib`` of each part (``torch.cuda.max_memory_allocated``).

Random weights: nothing is downloaded (the models are built from their configs), so the check
runs on a machine without network; the numbers are speed, not quality. It installs nothing: a
CUDA build of torch comes from the user's set-up (``make setup TORCH_INDEX=...``). Without a
CUDA device it stops with one line and exit status 2. ``--device cpu --tiny`` runs every part
with tiny models (the test of this script). The whole check takes a few minutes on a GPU;
``--repeats`` trades time for steadier numbers.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Callable[[], Any], device: str, repeats: int) -> float:
    """Median seconds of ``repeats`` calls after one warm-up call."""
    fn()
    _sync(device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def _peak(device: str) -> float | None:
    if not device.startswith("cuda"):
        return None
    return round(torch.cuda.max_memory_allocated() / 2**20, 1)


def _reset(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _sentences(data_dir: str | None, n: int) -> list[str]:
    """Real sentences (ParaBank-Eval candidates) when the data is there, else generated ones."""
    try:
        from paraamr.corpus.errors import SkipLog
        from paraamr.corpus.readers import read_corpus
        from paraamr.datadir import resolve_data_dir

        root = resolve_data_dir(data_dir) / "paraphrase" / "parabank-eval"
        out = []
        for r in read_corpus(root, "parabank-eval-parabank1", SkipLog("skip")):
            out += [r.text, *(p.text for p in r.paraphrases)]
            if len(out) >= n:
                return out[:n]
    except Exception:  # noqa: BLE001 - the check runs without the data too
        pass
    return [f"sentence number {i} says something about {i % 17} things." for i in range(n)]


def check_encode(device: str, tiny: bool, repeats: int, data_dir: str | None) -> dict:
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from paraamr.metrics.semantic import cosine_pairs, resolve_model

    sents = _sentences(data_dir, 64 if tiny else 4096)
    pairs = list(zip(sents[0::2], sents[1::2], strict=False))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tok = AutoTokenizer.from_pretrained(resolve_model("minilm"))
        cfg = BertConfig(vocab_size=tok.vocab_size)
        if tiny:
            cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64)  # fmt: skip
        torch.manual_seed(0)
        BertModel(cfg).save_pretrained(tmp)
        tok.save_pretrained(tmp)
        for name, path in (("minilm", resolve_model("minilm")), ("bert-base-random", tmp)):
            _reset(device)
            model = SentenceTransformer(path, device=device)
            s = _timed(lambda m=model: cosine_pairs(pairs, m, batch_size=128), device, repeats)
            out[name] = {"pairs_per_s": round(len(pairs) / s, 1), "pairs": len(pairs),
                         "peak_memory_mib": _peak(device)}  # fmt: skip
            del model
    return out


def _seq2seq(kind: str, tiny: bool):
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        T5Config,
        T5ForConditionalGeneration,
    )

    if tiny:
        small = dict(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                     vocab_size=1000)  # fmt: skip
        if kind == "t5":
            return T5ForConditionalGeneration(T5Config(d_model=32, d_ff=64, num_layers=1,
                                                       num_heads=2, d_kv=16, vocab_size=1000,
                                                       decoder_start_token_id=0))  # fmt: skip
        return BartForConditionalGeneration(BartConfig(**small))
    if kind == "t5":  # t5-base
        return T5ForConditionalGeneration(T5Config(d_model=768, d_ff=3072, num_layers=12,
                                                   num_heads=12, d_kv=64,
                                                   decoder_start_token_id=0))  # fmt: skip
    if kind == "bart-large":
        return BartForConditionalGeneration(BartConfig())  # BartConfig() is bart-large's shape
    return BartForConditionalGeneration(
        BartConfig(
            d_model=768,
            encoder_layers=6,
            decoder_layers=6,
            encoder_attention_heads=12,
            decoder_attention_heads=12,
            encoder_ffn_dim=3072,
            decoder_ffn_dim=3072,
        )
    )  # fmt: skip  bart-base


def check_builder(device: str, tiny: bool, repeats: int) -> dict:
    from transformers import GPT2Config, GPT2LMHeadModel

    n, src_len, new = (4, 8, 4) if tiny else (32, 48, 48)
    out = {}
    g = torch.Generator().manual_seed(0)
    for name, kind in (("stog_bart_large", "bart-large"), ("generator_t5_base", "t5")):
        _reset(device)
        torch.manual_seed(0)
        model = _seq2seq(kind, tiny).to(device).eval()
        vocab = model.config.vocab_size
        ids = torch.randint(5, vocab, (n, src_len), generator=g).to(device)

        def gen(x: torch.Tensor, m=model) -> None:
            with torch.inference_mode():
                m.generate(x, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                           num_beams=1)  # fmt: skip

        batched = _timed(lambda x=ids: gen(x), device, repeats)
        single = _timed(lambda x=ids: [gen(x[i : i + 1]) for i in range(n)], device, repeats)
        out[name] = {"batched_items_per_s": round(n / batched, 2),
                     "one_per_call_items_per_s": round(n / single, 2),
                     "speedup": round(single / batched, 2), "batch": n,
                     "peak_memory_mib": _peak(device)}  # fmt: skip
        del model
    _reset(device)
    cfg = GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=1000) if tiny else GPT2Config()
    torch.manual_seed(0)
    lm = GPT2LMHeadModel(cfg).to(device).eval()
    ids = torch.randint(0, cfg.vocab_size, (n, 32), generator=g).to(device)

    def score(x: torch.Tensor) -> None:
        with torch.inference_mode():
            lm(x, labels=x)

    batched = _timed(lambda: score(ids), device, repeats)
    single = _timed(lambda: [score(ids[i : i + 1]) for i in range(n)], device, repeats)
    out["lm_gpt2"] = {"batched_items_per_s": round(n / batched, 2),
                      "one_per_call_items_per_s": round(n / single, 2),
                      "speedup": round(single / batched, 2), "batch": n,
                      "peak_memory_mib": _peak(device)}  # fmt: skip
    return out


def _train_steps(step: Callable[[], torch.Tensor], params, device: str, repeats: int,
                 bf16: bool) -> float:  # fmt: skip
    opt = torch.optim.AdamW(params, lr=1e-5)

    def one() -> None:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16, enabled=bf16):
            loss = step()
        loss.backward()
        opt.step()

    return _timed(one, device, repeats)


def check_train(device: str, tiny: bool, repeats: int) -> dict:
    from transformers import BertConfig, BertModel

    from paraamr.simcse.loss import simcse_loss

    precisions = [False]
    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        precisions.append(True)
    out: dict[str, Any] = {}
    g = torch.Generator().manual_seed(0)
    for name, batch, src, tgt in (("scpn_bart_base", 32, 60, 60), ("top_bart_base", 32, 32, 64)):
        if tiny:
            batch, src, tgt = 4, 8, 8
        for bf16 in precisions:
            _reset(device)
            torch.manual_seed(0)
            model = _seq2seq("bart-base", tiny).to(device).train()
            v = model.config.vocab_size
            x = torch.randint(5, v, (batch, src), generator=g).to(device)
            y = torch.randint(5, v, (batch, tgt), generator=g).to(device)
            s = _train_steps(lambda m=model, x=x, y=y: m(input_ids=x, labels=y).loss,
                             model.parameters(), device, repeats, bf16)  # fmt: skip
            out[f"{name}_{'bf16' if bf16 else 'fp32'}"] = {
                "steps_per_s": round(1 / s, 3), "batch": batch, "source_len": src,
                "target_len": tgt, "peak_memory_mib": _peak(device)}  # fmt: skip
            del model
    batch, seq = (4, 8) if tiny else (128, 32)
    cfg = (BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, vocab_size=1000) if tiny else BertConfig())  # fmt: skip
    for bf16 in precisions:
        _reset(device)
        torch.manual_seed(0)
        enc = BertModel(cfg).to(device).train()
        ids = torch.randint(5, cfg.vocab_size, (3 * batch, seq), generator=g).to(device)

        def step(e=enc, ids=ids) -> torch.Tensor:
            cls = e(input_ids=ids).last_hidden_state[:, 0]
            z1, z2, z3 = cls[:batch], cls[batch : 2 * batch], cls[2 * batch :]
            return simcse_loss(z1, z2, z3)

        s = _train_steps(step, enc.parameters(), device, repeats, bf16)
        out[f"simcse_bert_base_{'bf16' if bf16 else 'fp32'}"] = {
            "steps_per_s": round(1 / s, 3), "batch_triplets": batch, "seq_len": seq,
            "peak_memory_mib": _peak(device)}  # fmt: skip
        del enc
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:1, or cpu")
    ap.add_argument("--out", default="results/bench/gpu_check.json")
    ap.add_argument("--tiny", action="store_true", help="tiny models (tests the script)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--parts", default="encode,builder,train")
    a = ap.parse_args(argv)
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        built = torch.version.cuda or "a CPU-only build"
        print(f"gpu-check: error: no CUDA device visible (torch {torch.__version__}, {built}); "
              "run it on a machine with a CUDA GPU and a CUDA build of torch "
              "(make setup TORCH_INDEX=https://download.pytorch.org/whl/cu126)",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(2)
    t0 = time.perf_counter()
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(a.device) if a.device.startswith("cuda") else "cpu",
        "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
        "tiny": a.tiny, "repeats": a.repeats, "weights": "random (speed only)",
    }  # fmt: skip
    parts = {"encode": lambda: check_encode(a.device, a.tiny, a.repeats, a.data_dir),
             "builder": lambda: check_builder(a.device, a.tiny, a.repeats),
             "train": lambda: check_train(a.device, a.tiny, a.repeats)}  # fmt: skip
    for name in a.parts.split(","):
        t = time.perf_counter()
        report[name] = parts[name]()
        report[f"{name}_seconds"] = round(time.perf_counter() - t, 1)
        print(f"{name}: {report[f'{name}_seconds']} s", file=sys.stderr)
    report["total_seconds"] = round(time.perf_counter() - t0, 1)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
