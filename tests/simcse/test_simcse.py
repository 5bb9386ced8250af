"""Supervised SimCSE: loss, triplets, Lightning training, export, resume, NaN guard, DDP."""

from __future__ import annotations

import csv
import json
import math
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from paraamr.corpus.errors import SkipLog
from paraamr.errors import CorpusFormatError, ParaAMRError
from paraamr.simcse.data import (
    SimCSEDataModule,
    Triplet,
    load_triplets,
    read_pair_tsv,
    read_simcse_csv,
    triplets_from_corpus,
)
from paraamr.simcse.loss import SimCSELoss, simcse_logits, simcse_loss

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- loss


def _hand_loss(z1, z2, z3, temperature, weight):
    """Explicit loops: cosine of each anchor with every candidate, log-softmax, mean NLL."""
    z1, z2 = np.asarray(z1, float), np.asarray(z2, float)
    cands = list(z2) + ([] if z3 is None else list(np.asarray(z3, float)))
    b = len(z1)
    total = 0.0
    for i in range(b):
        row = []
        for j, c in enumerate(cands):
            cos = float(z1[i] @ c / (np.linalg.norm(z1[i]) * np.linalg.norm(c)))
            logit = cos / temperature
            if z3 is not None and j == b + i:
                logit += weight
            row.append(logit)
        row = np.array(row)
        log_softmax = row - (row.max() + np.log(np.exp(row - row.max()).sum()))
        total += -log_softmax[i]
    return total / b


@pytest.mark.parametrize("with_neg", [False, True])
@pytest.mark.parametrize("temperature", [0.05, 1.0])
@pytest.mark.parametrize("weight", [0.0, 0.7, -2.0])
def test_loss_matches_hand_computation(with_neg, temperature, weight):
    g = torch.Generator().manual_seed(0)
    z1, z2, z3 = (torch.randn(5, 7, generator=g, dtype=torch.float64) for _ in range(3))
    z3 = z3 if with_neg else None
    got = simcse_loss(z1, z2, z3, temperature=temperature, hard_negative_weight=weight)
    want = _hand_loss(z1, z2, z3, temperature, weight)
    assert got.item() == pytest.approx(want, rel=1e-5, abs=1e-5)
    module = SimCSELoss(temperature, weight)(z1, z2, z3)
    assert module.item() == pytest.approx(got.item())


def test_logits_shape_and_hard_negative_bonus_position():
    z = torch.eye(3)
    plain = simcse_logits(z, z, z, temperature=1.0)
    bonus = simcse_logits(z, z, z, temperature=1.0, hard_negative_weight=5.0)
    assert plain.shape == (3, 6)
    diff = bonus - plain
    assert torch.equal(diff[:, 3:], 5.0 * torch.eye(3)) and not diff[:, :3].any()


def test_loss_rejects_bad_temperature_and_shapes():
    z = torch.eye(2)
    with pytest.raises(ValueError, match="temperature"):
        simcse_loss(z, z, temperature=0.0)
    with pytest.raises(ValueError, match="shape"):
        simcse_loss(z, torch.eye(3))


# --------------------------------------------------------------------------- triplets


def _corpus(tmp_path: Path) -> Path:
    recs = [
        {"text": "S1.", "paraphrases": [
            {"para_text": "p1a", "perplexity": 10.0},
            {"para_text": "p1b", "perplexity": 200.0},
            {"para_text": "p1c", "perplexity": 50.0},
            {"para_text": "p1d"},
        ]},
        {"text": "S2.", "paraphrases": [{"para_text": "p2a", "perplexity": 109.9}]},
        {"text": "S3.", "paraphrases": []},
        {"text": "S4.", "paraphrases": [
            {"para_text": "p4a", "perplexity": 110.0},
            {"para_text": "p4b", "perplexity": 1.0},
        ]},
    ]  # fmt: skip
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def test_corpus_triplets_perplexity_filter(tmp_path):
    p = _corpus(tmp_path)
    stats = Counter()
    out = triplets_from_corpus(p, max_perplexity=110, seed=0, stats=stats)
    assert [(t.anchor, t.positive) for t in out] == [
        ("S1.", "p1a"),
        ("S1.", "p1c"),
        ("S2.", "p2a"),
        ("S4.", "p4a"),
        ("S4.", "p4b"),
    ]
    assert stats["dropped_perplexity"] == 1 and stats["dropped_no_perplexity"] == 1
    assert stats["sources"] == 4 and stats["triplets"] == 5
    everything = triplets_from_corpus(p, max_perplexity=None, seed=0)
    assert len(everything) == 7  # the paraphrase without perplexity is kept


def test_corpus_triplets_cap_negatives_and_seed(tmp_path):
    p = _corpus(tmp_path)
    sources = {"S1.", "S2.", "S3.", "S4."}
    capped = triplets_from_corpus(p, max_paraphrases_per_source=1, seed=3)
    assert Counter(t.anchor for t in capped) == {"S1.": 1, "S2.": 1, "S4.": 1}
    for seed in range(10):
        out = triplets_from_corpus(p, seed=seed)
        assert all(t.negative in sources and t.negative != t.anchor for t in out)
        assert out == triplets_from_corpus(p, seed=seed)  # deterministic
    negatives = {tuple(t.negative for t in triplets_from_corpus(p, seed=s)) for s in range(10)}
    assert len(negatives) > 1  # and the seed matters
    assert len(triplets_from_corpus(p, seed=0, limit=5)) == 5


def test_corpus_without_perplexities_under_a_threshold_is_a_clear_error(tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("A.\tB.\nC.\tD.\n")
    with pytest.raises(ParaAMRError, match="max_perplexity=null"):
        triplets_from_corpus(p, "pairs", max_perplexity=110)


def test_simcse_csv(tmp_path):
    p = tmp_path / "nli.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sent0", "sent1", "hard_neg"])
        w.writerow(["A man, a plan.", "A plan.", "No plan."])
        w.writerow(["Two\nlines.", "Two lines.", "One line."])
        w.writerow(["Short row", "only two"])
        w.writerow(["x", "", "z"])
        w.writerow(["Last.", "Final.", "First."])
    with pytest.raises(CorpusFormatError, match=r"nli\.csv:5: missing field hard_neg"):
        read_simcse_csv(p)  # line 5: the quoted field of row 2 spans two lines
    skips = SkipLog("skip")
    out = read_simcse_csv(p, skips)
    assert out == [
        Triplet("A man, a plan.", "A plan.", "No plan."),
        Triplet("Two\nlines.", "Two lines.", "One line."),
        Triplet("Last.", "Final.", "First."),
    ]
    assert skips.counts == {"missing field hard_neg": 1, "empty field sent1": 1}
    assert load_triplets(p, on_error="skip") == out  # .csv -> simcse-csv

    q = tmp_path / "pos.csv"
    q.write_text("sent0,sent1\nA.,B.\nC.,D.\nE.,F.\n")
    out = read_simcse_csv(q, seed=1)
    assert [t.positive for t in out] == ["B.", "D.", "F."]
    assert all(t.negative in {"A.", "C.", "E."} - {t.anchor} for t in out)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(CorpusFormatError, match="sent0 and sent1"):
        read_simcse_csv(bad)


def test_pair_tsv(tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("A.\tB.\nC.\tD.\tE.\n\tX.\nF.\tG.\n")
    with pytest.raises(CorpusFormatError, match=r"pairs\.tsv:2: expected 2 columns"):
        read_pair_tsv(p)
    skips = SkipLog("skip")
    out = read_pair_tsv(p, skips, seed=0)
    assert [(t.anchor, t.positive) for t in out] == [("A.", "B."), ("F.", "G.")]
    assert [t.negative for t in out] == ["F.", "A."]
    assert skips.total == 2


def test_data_module_batches(tmp_path, minilm_path):
    trips = [Triplet(f"a{i}", f"p{i}", f"n{i}") for i in range(5)]
    dm = SimCSEDataModule(trips, minilm_path, max_seq_length=8, batch_size=2, seed=0)
    batches = list(dm.train_dataloader())
    assert [b["input_ids"].shape[0] for b in batches] == [6, 6, 3]
    assert batches[0]["input_ids"].shape[1] <= 8
    again = list(SimCSEDataModule(trips, minilm_path, 8, 2, seed=0).train_dataloader())
    assert all(
        torch.equal(x["input_ids"], y["input_ids"]) for x, y in zip(batches, again, strict=True)
    )


# --------------------------------------------------------------------------- training


@pytest.fixture(scope="session")
def minilm_path() -> str:
    from paraamr.metrics.semantic import resolve_model

    return resolve_model("minilm")


@pytest.fixture(scope="session")
def msrp_pairs(data_dir, tmp_path_factory) -> Path:
    """The first 24 positive MSRP training pairs as a pair TSV."""
    src = data_dir / "paraphrase" / "msrp" / "msr-para-train.tsv"
    if not src.is_file():
        pytest.skip(f"{src} not found")
    out = tmp_path_factory.mktemp("msrp") / "pairs.tsv"
    with open(src, encoding="utf-8-sig", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]
    pos = [(r["#1 String"], r["#2 String"]) for r in rows if r["Quality"] == "1"][:24]
    out.write_text("".join(f"{a}\t{b}\n" for a, b in pos))
    return out


def _cfg(out_dir: Path, *overrides: str):
    from hydra import compose, initialize_config_dir

    from paraamr.datadir import resolve_paths

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(
            "simcse",
            overrides=[
                f"out_dir={out_dir}",
                "data.max_seq_length=32",
                "data.batch_size=4",
                "trainer.max_steps=2",
                "data.limit=48",
                "callbacks.sts_dev.limit_pairs=32",
                "callbacks.sts_dev.every_n_steps=2",
                "trainer.log_every_n_steps=1",
                "trainer.enable_progress_bar=false",
                "logger.wandb.enabled=false",
                *overrides,
            ],
        )
    resolve_paths(cfg)  # as the entry point does
    return cfg


def _losses(log_dir: str) -> list[float]:
    with open(Path(log_dir) / "metrics.csv") as fh:
        return [float(r["train/loss"]) for r in csv.DictReader(fh) if r["train/loss"]]


def test_paper_preset_composes():
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("simcse", overrides=["+experiment=simcse_paper", "seed=3"])
    assert cfg.model.model_name_or_path == "bert-base-uncased" and cfg.model.pooling == "cls"
    t = (cfg.data.batch_size, cfg.trainer.max_epochs, cfg.trainer.max_steps, cfg.model.lr)
    assert t == (128, 3, -1, 1e-5)
    assert cfg.data.max_perplexity == 110 and cfg.logger.wandb.name == "parabank1-eval-3"


def test_fast_dev_run_on_msrp(tmp_path, msrp_pairs):
    from paraamr.simcse.train import train

    cfg = _cfg(
        tmp_path,
        f"data.path={msrp_pairs}",
        "data.format=pairs",
        "trainer.fast_dev_run=true",
    )
    out = train(cfg)
    assert out["steps"] == 1 and out["best_model"] is None and out["num_triplets"] == 24


def test_short_run_exports_a_sentence_transformer(tmp_path):
    from sentence_transformers import SentenceTransformer

    from paraamr.simcse.module import read_stsb_dev, stsb_dev_spearman
    from paraamr.simcse.train import input_paths, train

    cfg = _cfg(
        tmp_path,
        "trainer.max_steps=4",
        "data.batch_size=8",
        "callbacks.sts_dev.every_n_steps=2",
        "callbacks.sts_dev.limit_pairs=64",
    )
    out = train(cfg)
    assert out["steps"] == 4 and math.isfinite(out["best_val"])
    assert Path(out["best_checkpoint"]).name.startswith(("step2-", "step4-"))
    model = SentenceTransformer(out["best_model"], device="cpu")
    emb = model.encode(["A man is playing a guitar.", "A woman slices onions."])
    assert emb.shape == (2, 384) and np.isfinite(emb).all()
    # the exported model is the best checkpoint, pooling included: same dev score
    pairs = read_stsb_dev(input_paths(cfg)[2], limit=64)
    assert stsb_dev_spearman(model.encode, pairs) == pytest.approx(out["best_val"], abs=1e-4)
    with open(Path(out["log_dir"]) / "metrics.csv") as fh:
        vals = [r["val/stsb_spearman"] for r in csv.DictReader(fh) if r["val/stsb_spearman"]]
    assert len(vals) == 2  # evaluated at steps 2 and 4, each logged once
    # fit() drew the run's curves from that log
    from paraamr.figures import png_description

    curves = Path(cfg.out_dir) / "curves.png"
    assert png_description(curves) == f"log:{Path(out['log_dir']) / 'metrics.csv'}"
    assert (Path(cfg.out_dir) / "curves.pdf").stat().st_size > 0


def test_resume_and_determinism(tmp_path, monkeypatch):
    from paraamr.simcse.train import train

    seen: list[tuple[int, ...]] = []  # the first anchor's token ids of each trained batch
    hook = SimCSEDataModule.on_before_batch_transfer

    def spy(self, batch, dataloader_idx):
        seen.append(tuple(batch["input_ids"][0].tolist()))
        return hook(self, batch, dataloader_idx)

    monkeypatch.setattr(SimCSEDataModule, "on_before_batch_transfer", spy)
    straight = train(_cfg(tmp_path / "straight", "trainer.max_steps=4"))
    straight_batches, seen[:] = list(seen), []
    a = train(_cfg(tmp_path / "a"))
    assert a["steps"] == 2 and straight["steps"] == 4
    # same seed: identical losses (the lr of the first two steps does not depend on max_steps)
    assert _losses(a["log_dir"]) == _losses(straight["log_dir"])[:2]
    last = tmp_path / "a" / "checkpoints" / "last.ckpt"
    seen[:] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = train(_cfg(tmp_path / "a", "trainer.max_steps=4", f"resume={last}"))
    assert not [w for w in caught if "not resumable" in str(w.message)]
    assert r["steps"] == 4
    with open(Path(r["log_dir"]) / "metrics.csv") as fh:
        steps = [int(row["step"]) for row in csv.DictReader(fh) if row["train/loss"]]
    assert steps == [2, 3]  # continued, not restarted
    assert seen == straight_batches[2:]  # with the batches a straight run trains next
    assert torch.load(last, weights_only=False)["global_step"] == 4


def test_loader_resume_state(minilm_path):
    trips = [Triplet(f"a{i}", f"p{i}", f"n{i}") for i in range(10)]
    dm = SimCSEDataModule(trips, minilm_path, max_seq_length=8, batch_size=3, seed=1)
    loader = dm.train_dataloader()
    full = list(iter(loader.sampler))
    assert sorted(full) == list(range(10)) and loader.state_dict()["batches"] == 0
    loader.load_state_dict({**loader.state_dict(), "epoch": 0, "batches": 2})
    assert list(iter(loader.sampler)) == full[6:]
    assert sum(b["input_ids"].shape[0] for b in loader) == 3 * 4  # 4 triplets left
    loader.sampler.set_epoch(1)
    assert len(list(iter(loader.sampler))) == 10
    fresh = dm.train_dataloader()
    fresh.load_state_dict({**loader.state_dict(), "batch_size": 4})  # settings changed
    assert list(iter(fresh.sampler)) == full  # no skip


def test_nan_loss_stops_before_any_checkpoint(tmp_path, monkeypatch):
    import paraamr.simcse.module as mod
    from paraamr.simcse.train import train

    def nan_loss(z1, *args, **kwargs):
        return (z1.sum() * float("nan")).float()

    monkeypatch.setattr(mod, "simcse_loss", nan_loss)
    with pytest.raises(RuntimeError, match=r"loss is nan at step 0 \(lr .*lower the learning rate"):
        train(_cfg(tmp_path, "callbacks.sts_dev.every_n_steps=1"))
    assert not (tmp_path / "best_model").exists()
    assert not list(tmp_path.rglob("*.ckpt"))


@pytest.mark.slow
def test_ddp_two_cpu_processes_gather_the_global_batch(tmp_path):
    from paraamr.simcse.train import train

    cfg = _cfg(
        tmp_path,
        "trainer.strategy=ddp_spawn",
        "trainer.devices=2",
        "trainer.accelerator=cpu",
        "data.batch_size=4",
        "trainer.max_steps=2",
    )
    out = train(cfg)
    with open(Path(out["log_dir"]) / "metrics.csv") as fh:
        widths = [float(r["train/num_candidates"]) for r in csv.DictReader(fh) if r["train/loss"]]
    assert widths == [16.0, 16.0]  # 2 x (2 processes x 4 triplets)
    assert Path(out["best_model"], "modules.json").is_file()


def test_table5_with_a_list_of_corpora_is_a_clear_error(compose_config):
    """SCPN pools a list of corpora (``data.path=[a,b,c]``); SimCSE trains on one, and says so."""
    from paraamr.errors import ConfigError
    from paraamr.simcse.job import _resolve_data_path

    cfg = compose_config("table5", "train_corpus=msrp", "data.path=[a.tsv,b.tsv,c.tsv]")
    with pytest.raises(ConfigError, match="lists 3 corpora"):
        _resolve_data_path(cfg)


def test_a_pairs_tsv_is_capped_per_source_like_every_other_format(tmp_path):
    """A ``.tsv`` is read as ``pairs``; its consecutive lines of one source are one record, so
    ``max_paraphrases_per_source`` caps them as it caps a JSON-lines corpus."""
    p = tmp_path / "c.tsv"
    p.write_text(
        "A cat.\tOne cat.\nA cat.\tThe cat.\nA cat.\tCats.\nDogs.\tHounds.\nDogs.\tCanines.\n"
    )
    capped = load_triplets(p, max_paraphrases_per_source=1, seed=0)  # format guessed: pairs
    assert sorted(t.anchor for t in capped) == ["A cat.", "Dogs."]
    assert len(load_triplets(p, seed=0)) == 5


def test_a_causal_lm_trains_as_a_mean_pooled_encoder_with_frozen_blocks(tmp_path, tiny_gpt2):
    """A decoder (no padding token; here a tiny GPT-2, as SmolLM2 in model=simcse_smollm2) pads
    with its end-of-text token, freezes its lower blocks, trains and exports a model that
    sentence-transformers loads."""
    from sentence_transformers import SentenceTransformer

    from paraamr.simcse.module import SimCSEModule
    from paraamr.simcse.train import train

    frozen = SimCSEModule(tiny_gpt2, pooling="mean", freeze_layers=1)
    assert frozen.tokenizer.pad_token == frozen.tokenizer.eos_token
    blocks = frozen.encoder.h
    assert not any(p.requires_grad for p in blocks[0].parameters())
    assert all(p.requires_grad for p in blocks[1].parameters())
    cfg = _cfg(tmp_path, f"model.model_name_or_path={tiny_gpt2}", "model.pooling=mean",
               "model.freeze_layers=1", "callbacks.sts_dev.limit_pairs=16")  # fmt: skip
    out = train(cfg)
    model = SentenceTransformer(out["best_model"], device="cpu")
    emb = model.encode(["A man is playing a guitar.", "Hi."])
    assert emb.shape == (2, 32) and np.isfinite(emb).all()
