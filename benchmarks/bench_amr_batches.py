"""Benchmark the AMR trainings' batches on this machine: one epoch over the same training pairs
with shuffled batches vs batches grouped by length (``data.group_by_length``), side by side.

    python benchmarks/bench_amr_batches.py --out results/bench/amr_batches.json
    python benchmarks/bench_amr_batches.py --pairs 24 --directions parse --model tiny  # smoke

For each direction: the model of ``conf/amr.yaml`` (SmolLM2-135M, the lowest 20 of 30 blocks
frozen, the direction's lengths; bf16 autocast where the CPU runs it natively, else fp32, as
the trainer resolves it), ``--pairs`` training pairs of the fixed split drawn with a seed, and
one epoch of ``training_step`` + backward + Adam over them in batches of 8 through the
trainer's own data module (:class:`paraamr.training.data.PairDataModule`), shuffled and then
grouped; a fresh model for each. Reported: seconds for the epoch, seconds per step, and the
padded tokens per real token of the batches (also over the whole training split, which needs
no model).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def _config(direction: str, model: str | None):
    from hydra import compose, initialize_config_dir

    from paraamr.amrlm.train import _direction_config

    with initialize_config_dir(str(ROOT / "conf"), version_base=None):
        # the tiny model reads 128 positions
        lengths = {"parser": (32, 64), "generator": (64, 32)}
        frozen = ["model.freeze_layers=1", "stages.generator.model.freeze_layers=1"]
        tiny = [f"model.model_name_or_path={model}", *frozen] + [
            f"stages.{role}.model.max_{side}_length={n}"
            for role, ns in lengths.items()
            for side, n in zip(("source", "target"), ns, strict=True)
        ]
        cfg = compose("amr", overrides=tiny if model else [])
    return _direction_config(cfg, direction)


def _token_lengths(module, pairs) -> list[int]:
    """Tokens of each ``prompt <newline> answer <eos>`` row, as the module lays it out."""
    return [int(module.encode_batch([s], [t])["input_ids"].numel()) for s, t in pairs]


def padding_ratio(lengths: list[int], batches: list[list[int]]) -> float:
    """Padded tokens per real token when each batch pads to its longest row.

    >>> padding_ratio([1, 3, 2, 2], [[0, 1], [2, 3]])
    1.25
    """
    padded = sum(max(lengths[i] for i in b) * len(b) for b in batches)
    return padded / sum(lengths)


def _epoch_batches(n: int, batch_size: int, lengths: list[int] | None, seed: int):
    from paraamr.training.data import ListDataset, ResumableSampler

    s = ResumableSampler(ListDataset(range(n)), seed=seed, lengths=lengths, batch_size=batch_size)
    s.set_epoch(0)
    order = list(s)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def bench_direction(direction: str, model: str | None, n_pairs: int, data_dir: str) -> dict:
    from hydra.utils import instantiate

    from paraamr.amrlm.data import pairs_for
    from paraamr.amrlm.split import load_split
    from paraamr.training.data import PairDataModule
    from paraamr.training.recipe import resolve_precision

    cfg = _config(direction, model)
    items = [(e.sentence, e.graph) for e in load_split(Path(data_dir), "train", None)]
    every = pairs_for(direction, items)
    pairs = random.Random(0).sample(every, min(n_pairs, len(every)))
    precision, _ = resolve_precision(cfg.trainer.precision, "cpu")
    bf16 = str(precision).startswith("bf16")
    batch = int(cfg.data.batch_size)
    row: dict = {"direction": direction, "pairs": len(pairs), "batch_size": batch,
                 "precision": "bf16 autocast" if bf16 else "fp32"}  # fmt: skip
    for grouped in (False, True):
        torch.manual_seed(0)
        module = instantiate(cfg.model)
        module.log = lambda *a, **k: None  # no Trainer attached
        if "lengths" not in row:
            split_lengths = _token_lengths(module, every)
            row["lengths"] = {"mean": sum(split_lengths) / len(split_lengths),
                              "max": max(split_lengths)}  # fmt: skip
            chars = [len(s) + len(t) for s, t in every]
            for name, lens in (("shuffled", None), ("grouped", chars)):
                row[f"split_padding_{name}"] = round(
                    padding_ratio(split_lengths, _epoch_batches(len(every), batch, lens, 0)), 3
                )
            print(json.dumps({direction: {k: v for k, v in row.items() if "padding" in k}}))
        dm = PairDataModule(pairs, [], module.encode_batch, batch_size=batch, seed=0,
                            group_by_length=grouped)  # fmt: skip
        opt = torch.optim.Adam([p for p in module.model.parameters() if p.requires_grad], lr=1e-5)
        module.model.train()
        real = padded = steps = 0
        t0 = time.perf_counter()
        for k, b in enumerate(dm.train_dataloader()):
            cast = torch.autocast("cpu", torch.bfloat16) if bf16 else contextlib.nullcontext()
            with cast:
                loss = module.training_step(b, k)
            loss.backward()
            opt.step()
            opt.zero_grad()
            real += int(b["attention_mask"].sum())
            padded += int(b["attention_mask"].numel())
            steps += 1
        seconds = time.perf_counter() - t0
        name = "grouped" if grouped else "shuffled"
        row[name] = {"epoch_s": round(seconds, 2), "s_per_step": round(seconds / steps, 3),
                     "steps": steps, "padded_per_real_token": round(padded / real, 3)}  # fmt: skip
        print(json.dumps({direction: {name: row[name]}}), flush=True)
    row["speedup"] = round(row["shuffled"]["epoch_s"] / row["grouped"]["epoch_s"], 2)
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/bench/amr_batches.json")
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--directions", default="parse,generate")
    ap.add_argument("--pairs", type=int, default=160, help="training pairs per epoch")
    ap.add_argument("--model", default=None, help="tiny: a tiny random causal LM (smoke)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    a = ap.parse_args(argv)
    from paraamr.precision import cpu_bf16_support
    from paraamr.utils import measured_on, write_json_atomic

    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        model = a.model
        if model == "tiny":
            from paraamr.testing.tiny_models import build_tiny_causal_lm

            model = str(build_tiny_causal_lm(Path(tmp) / "tiny"))
        rows = [bench_direction(d, model, a.pairs, str(a.data_dir))
                for d in a.directions.split(",")]  # fmt: skip
    out = {
        "machine": {
            **measured_on(),
            "torch_threads": torch.get_num_threads(),
            "cpu_bf16": cpu_bf16_support(),
            "torch": torch.__version__,
        },  # fmt: skip
        "settings": {k: str(v) for k, v in vars(a).items()},
        "results": rows,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(a.out, out, sort_keys=False)
    print(json.dumps({r["direction"]: r["speedup"] for r in rows}))


if __name__ == "__main__":
    main()
