"""The one conditional-generation module (paraamr.training.condgen) under SCPN and TOP: one
loss, one token-weighted dev loss, one optimiser/schedule builder, one generation wrapper, one
sidecar reader, one backbone loader."""

from __future__ import annotations

import pytest
import torch

from paraamr.errors import ConfigError, DataNotFoundError
from paraamr.scpn.module import SCPNModule
from paraamr.scpn.pairs import TrainPair
from paraamr.top.module import TopModule
from paraamr.training.condgen import CondGenModule


def test_both_tasks_train_validate_and_optimise_through_the_shared_module():
    for cls in (SCPNModule, TopModule):
        assert issubclass(cls, CondGenModule)
        own = set(vars(cls))
        shared = {"training_step", "validation_step", "configure_optimizers", "forward"}
        assert not own & shared, f"{cls.__name__} redefines {sorted(own & shared)}"


def _token_nll_by_hand(model, batch) -> tuple[float, int]:
    """Summed cross-entropy of the non -100 labels, from the full logits (the plain way)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logits, labels = logits[:, :-1], batch["labels"][:, 1:]
    keep = labels != -100
    nll = torch.nn.functional.cross_entropy(logits[keep].float(), labels[keep], reduction="sum")
    return float(nll), int(keep.sum())


def test_dev_loss_weights_every_answer_token_once(tiny_gpt2, monkeypatch):
    m = SCPNModule(tiny_gpt2, input_format="noparse")
    m.eval()
    short = m.encoder.batch([TrainPair("we left .", "go .", None, None)])
    words = "they went away from here at last ."
    long = m.encoder.batch([TrainPair("we left .", words, None, None)])
    logged = {}
    monkeypatch.setattr(m, "log", lambda name, value, **kw: logged.__setitem__(name, value))
    with torch.no_grad():
        m.on_validation_epoch_start()
        m.validation_step(short, 0)
        m.validation_step(long, 1)
        m.on_validation_epoch_end()
        (s1, n1), (s2, n2) = _token_nll_by_hand(m.model, short), _token_nll_by_hand(m.model, long)
    assert n1 != n2
    assert logged["val/loss"] == pytest.approx((s1 + s2) / (n1 + n2), rel=1e-5)
    assert logged["val/loss"] != pytest.approx((s1 / n1 + s2 / n2) / 2, rel=1e-3)  # not per batch
    assert logged["val/ppl"] == pytest.approx(torch.tensor(logged["val/loss"]).exp().item())
    with torch.no_grad():  # the training loss of one batch is its mean token cross-entropy
        assert float(m.loss(long)) == pytest.approx(s2 / n2, rel=1e-5)


def test_the_corpus_loss_norm_weighs_every_training_token_the_same(tiny_gpt2, monkeypatch):
    m = SCPNModule(tiny_gpt2, input_format="noparse")
    m.eval()
    short = m.encoder.batch([TrainPair("we left .", "go .", None, None)])
    long = m.encoder.batch([TrainPair("we left .", "they went away from here at last .", None,
                                      None)])  # fmt: skip
    logged = {}
    monkeypatch.setattr(m, "log", lambda name, value, **kw: logged.__setitem__(name, value))
    with torch.no_grad():
        (s1, n1), (s2, n2) = _token_nll_by_hand(m.model, short), _token_nll_by_hand(m.model, long)
        assert float(m.training_step(short, 0)) == pytest.approx(s1 / n1, rel=1e-5)  # default
        m.loss_tokens = 5.0
        got = [float(m.training_step(b, 0)) for b in (short, long)]
        assert logged["train/loss"] == pytest.approx(s2 / n2, rel=1e-5)  # the curve: its mean
    # each batch's sum over one number: a long batch's step weighs n2 / n1 times a short one's
    assert got == pytest.approx([s1 / 5.0, s2 / 5.0], rel=1e-5)


def test_the_training_mean_of_answer_tokens_is_counted_as_the_loss_counts(tiny_gpt2):
    from paraamr.training.recipe import mean_answer_tokens

    m = TopModule(tiny_gpt2, labels=[])
    pairs = [("a b", "c"), ("d", "e f g h"), ("i", "j k")]
    enc = m.encode_batch([s for s, _ in pairs], [t for _, t in pairs])
    # by hand: each row's answer tokens (the labels that count)
    by_row = [int((row != -100).sum()) for row in enc["labels"]]
    assert len(set(by_row)) > 1
    assert mean_answer_tokens(pairs, m.encode_batch, chunk=2) == pytest.approx(sum(by_row) / 3)
    with pytest.raises(ConfigError, match="data.loss_norm must be one of"):
        from paraamr.amrlm.data import AMRData

        AMRData(loss_norm="tokens")


@pytest.mark.parametrize("task", ["scpn", "top"])
def test_generation_in_eval_mode_restores_train_mode_after_an_error(tiny_gpt2, task, monkeypatch):
    if task == "scpn":
        m = SCPNModule(tiny_gpt2, input_format="noparse", num_beams=1)
        call = lambda: m.generate_texts([(("we left .", "source"),)])  # noqa: E731
    else:
        m = TopModule(tiny_gpt2, labels=["IN:GET_X"], warmup_steps=0)
        call = lambda: m.generate(["we left"])  # noqa: E731
    m.train()
    seen = []

    def boom(**kw):
        seen.append((m.training, m.model.training))
        raise RuntimeError("out of memory")

    # the model's forward fails: under model.generate (beams, seq2seq) and under the greedy
    # decoding that drops finished rows (a decoder-only model's greedy calls) alike
    monkeypatch.setattr(m.model, "forward", boom)
    with pytest.raises(RuntimeError, match="out of memory"):
        call()
    assert seen == [(False, False)] and m.training and m.model.training


def test_saved_dirs_say_which_kind_they_are(tiny_gpt2, tmp_path):
    m = SCPNModule(tiny_gpt2, input_format="noparse", schedule="linear", warmup_steps=3)
    m.save(tmp_path / "scpn")
    again = SCPNModule.load(tmp_path / "scpn")
    assert again.optimizer_settings() == {
        "lr": 3e-5, "optimizer": "adam", "weight_decay": 0.0, "warmup_steps": 3,
        "schedule": "linear",
    }  # fmt: skip
    with pytest.raises(DataNotFoundError, match="not a saved SCPN model dir .no scpn.json"):
        SCPNModule.load(tmp_path)
    with pytest.raises(DataNotFoundError, match="not a saved TOP model dir .no top_module.json"):
        TopModule.from_saved(tmp_path / "scpn")


def test_one_loader_warm_starts_an_encoder_on_both_sides(tmp_path):
    from tiny_bert import build_tiny_bert

    from paraamr.lms.loading import load_lm

    path = build_tiny_bert(tmp_path / "bert")
    model, tok, arch = load_lm(str(path))
    assert arch == "bert2bert" and model.config.model_type == "encoder-decoder"
    for c in (model.config, model.generation_config):
        assert (c.decoder_start_token_id, c.pad_token_id, c.eos_token_id) == (
            tok.cls_token_id, tok.pad_token_id, tok.sep_token_id,
        )  # fmt: skip
    with pytest.raises(ConfigError, match="model.arch"):
        load_lm(str(path), "encoder-only")


def test_fit_settings_read_a_stage_trainer_with_keys_the_base_lacks():
    from omegaconf import OmegaConf

    from paraamr.training.seq2seq_train import fit_settings

    cfg = OmegaConf.create({
        "trainer": {"max_steps": 5},
        "stages": {"parser": {"trainer": {"max_steps": 7, "val_check_interval": 1}}},
        "model": {"lr": 1e-4, "freeze_layers": 20},
        "data": {"batch_size": 8},
    })  # fmt: skip
    OmegaConf.set_struct(cfg, True)  # as Hydra composes it
    want = {"max_steps": 7, "lr": 1e-4, "freeze_layers": 20, "batch_size": 8,
            "group_by_length": False, "loss_norm": "batch"}  # fmt: skip
    assert fit_settings(cfg, "parser") == want
    assert fit_settings(cfg, "generator")["max_steps"] == 5  # no stage: the base trainer's


def test_a_finished_top_stage_is_reused_only_under_its_training_settings(
    compose_config, tmp_path, monkeypatch
):
    """TOP's stages go through the same trainer as the AMR models: a finished model rerun with
    other training settings is refused, not reused under a signature that names them."""
    import json

    from paraamr.top.module import MODULE_FILE
    from paraamr.training.seq2seq_train import TRAIN_FILE, fit_settings, train_seq2seq

    def forbidden(*a, **k):
        raise AssertionError("a finished model was trained again")

    monkeypatch.setattr("paraamr.training.fit.fit", forbidden)
    cfg = compose_config("top", f"out_dir={tmp_path}")
    work = tmp_path / "generator"
    (work / "model").mkdir(parents=True)
    (work / "model" / MODULE_FILE).write_text("{}")
    record = {"role": "generator", "steps": 300, "settings": fit_settings(cfg, "generator")}
    (work / TRAIN_FILE).write_text(json.dumps(record))
    assert record["settings"]["max_steps"] == 300  # conf/top.yaml's generator
    assert train_seq2seq(cfg, "generator", [], [], work) == record  # same settings: reused
    other = compose_config("top", f"out_dir={tmp_path}", "stages.generator.trainer.max_steps=40",
                           "data.batch_size=4")  # fmt: skip
    with pytest.raises(ConfigError, match=r"'max_steps': \(300, 40\), 'batch_size': \(\d+, 4\)"):
        train_seq2seq(other, "generator", [], [], work)


def test_a_record_older_than_frozen_blocks_is_checked_against_the_saved_model(
    compose_config, tmp_path, monkeypatch
):
    """A model whose ``train_result.json`` predates ``freeze_layers`` in its settings is
    checked on the frozen blocks its own sidecar saved (20), so a config that now says 1 is
    refused instead of re-scoring it under a signature that says ``freeze:1``."""
    import json

    from paraamr.amrlm.train import _direction_config
    from paraamr.training.seq2seq_train import TRAIN_FILE, train_seq2seq

    monkeypatch.setattr("paraamr.training.fit.fit", lambda *a, **k: 1 / 0)
    cfg = _direction_config(compose_config("amr", f"out_dir={tmp_path}"), "generate")
    assert cfg.model.freeze_layers == 1  # the generator's default
    work = tmp_path / "generator"
    (work / "model").mkdir(parents=True)
    (work / "model" / "amr_module.json").write_text(json.dumps({"freeze_layers": 20}))
    (work / TRAIN_FILE).write_text(json.dumps({"role": "generator", "steps": 400}))
    with pytest.raises(ConfigError, match=r"'freeze_layers': \(20, 1\)"):
        train_seq2seq(cfg, "generator", [], [], work)
    (work / "model" / "amr_module.json").write_text(json.dumps({"freeze_layers": 1}))
    assert train_seq2seq(cfg, "generator", [], [], work)["steps"] == 400  # reused
