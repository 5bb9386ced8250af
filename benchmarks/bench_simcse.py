"""Benchmark SimCSE training throughput and STS evaluation time, offline MiniLM vs a randomly
initialised bert-base (the paper's architecture), on this machine.

    python benchmarks/bench_simcse.py --out results/bench/simcse.json

Training: the project's SimCSE module and data module through ``pl.Trainer`` (forward, backward,
AdamW step) on real ParaBank-Eval triplets (seq len 32), the same ``--batch-size`` for both
encoders, median of ``--steps`` steps after one warm-up step; a triplet counts as 3 sentences.
Evaluation: encoding the
offline Table 5 STS suite (STS12-16, 600-pair subsample per year) and scoring it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import pytorch_lightning as pl
import torch

ROOT = Path(__file__).resolve().parents[1]


def _random_bert_base(tmp: Path) -> str:
    from transformers import AutoTokenizer, BertConfig, BertModel

    from paraamr.metrics.semantic import resolve_model

    tok = AutoTokenizer.from_pretrained(resolve_model("minilm"))  # bert-base-uncased WordPiece
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tok.vocab_size)).save_pretrained(tmp)
    tok.save_pretrained(tmp)
    return str(tmp)


class StepTimer(pl.Callback):
    """Wall time of every training step (forward, backward, optimizer), in ``times``."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._t0 = 0.0

    def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
        self._t0 = time.perf_counter()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
        self.times.append(time.perf_counter() - self._t0)


def bench_train(model_path: str, pooling: str, batch_size: int, steps: int, data: Path) -> dict:
    """``steps`` + 1 training steps through ``pl.Trainer`` on the project's SimCSE module and data
    module (what ``experiments/simcse.py`` runs), the first (warm-up) step not counted."""
    from paraamr.simcse.data import SimCSEDataModule, triplets_from_corpus
    from paraamr.simcse.module import SimCSEModule

    triplets = triplets_from_corpus(
        data / "paraphrase" / "parabank-eval", "parabank-eval-parabank1", seed=0
    )
    module = SimCSEModule(model_path, pooling=pooling, lr=1e-5, max_seq_length=32)
    dm = SimCSEDataModule(triplets, model_path, max_seq_length=32, batch_size=batch_size, seed=0)
    timer = StepTimer()
    trainer = pl.Trainer(
        accelerator="cpu",
        max_steps=steps + 1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[timer],
    )
    trainer.fit(module, datamodule=dm)
    times = timer.times[1:]  # skip the warm-up step
    s = statistics.median(times)
    return {
        "batch_size": batch_size,
        "steps_timed": len(times),
        "median_seconds_per_step": s,
        "sentences_per_s": 3 * batch_size / s,
        "triplets_per_s": batch_size / s,
        "params_m": round(sum(p.numel() for p in module.parameters()) / 1e6, 1),
    }


def bench_eval(model_path: str, data: Path) -> dict:
    from sentence_transformers import SentenceTransformer

    from paraamr.simcse.job import subsample_suite
    from paraamr.sts import evaluate_sts, load_sts_suite

    suite = subsample_suite(
        load_sts_suite(data, include=("STS12", "STS13", "STS14", "STS15", "STS16")), 600
    )
    enc = SentenceTransformer(model_path, device="cpu")
    t0 = time.perf_counter()
    res = evaluate_sts(enc, suite)
    return {
        "seconds": time.perf_counter() - t0,
        "pairs": sum(s.n for s in suite.values()),
        "avg_spearman": res["avg"]["spearman"],
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=16, help="the same for both encoders")
    ap.add_argument("--out", default="results/bench/simcse.json")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    a = ap.parse_args(argv)
    data = Path(a.data_dir)
    torch.set_num_threads(a.threads)
    from paraamr.metrics.semantic import resolve_model

    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
        }
    }
    with tempfile.TemporaryDirectory() as tmp:
        bert = _random_bert_base(Path(tmp))
        for name, path, pooling in (
            ("minilm", resolve_model("minilm"), "mean"),
            ("bert-base (random init)", bert, "cls"),
        ):
            out[name] = {
                "train": bench_train(path, pooling, a.batch_size, a.steps, data),
                "eval": bench_eval(path, data),
            }
            print(name, json.dumps(out[name]), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
