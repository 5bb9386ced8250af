"""The whole TOP pipeline end to end with a tiny random warm-started EncoderDecoder (real
on-disk format): generator, sampling, filter, target parsers, evaluation, tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TREES = [
    "[IN:GET_WEATHER weather in [SL:LOCATION Paris ] ]",
    "[IN:GET_WEATHER weather in [SL:LOCATION Rome ] ]",
    "[IN:GET_WEATHER is it [SL:WEATHER_ATTRIBUTE cold ] ]",
    "[IN:GET_WEATHER is it [SL:WEATHER_ATTRIBUTE hot ] today ]",
    "[IN:GET_SUNSET when is sunset ]",
]


def _tiny_overrides(bert, train, test, out, model: str = "top_minilm") -> list[str]:
    """The settings every tiny pipeline run shares: tiny model (a tiny BERT warm-started as
    ``model=top_minilm`` is, unless ``model`` says otherwise), files, no logging, tiny sizes."""
    return [
        f"model={model}",
        f"model.model_name_or_path={bert}",
        f"data.train={train}",
        f"data.val={test}",
        f"data.test={test}",
        f"out_dir={out}",
        "logger.wandb.enabled=false",
        "progress=false",
        "trainer.enable_progress_bar=false",
        "model.warmup_steps=0",
        "model.max_target_length=16",
        "data.batch_size=2",
    ]


def _count_trainings(monkeypatch) -> list:
    """A list that gets one entry per training run through ``paraamr.training.fit.fit``."""
    from paraamr.training import fit as fit_mod

    trainings: list = []
    real_fit = fit_mod.fit
    monkeypatch.setattr(fit_mod, "fit", lambda *a, **k: trainings.append(1) or real_fit(*a, **k))
    return trainings


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, compose_config):
    from tiny_bert import build_tiny_bert

    from paraamr.top.pipeline import run

    d = tmp_path_factory.mktemp("top")
    (d / "train.seq").write_text("\n".join(TREES) + "\n")
    (d / "test.seq").write_text("\n".join(TREES[1:4]) + "\n")
    bert = build_tiny_bert(d / "bert", extra_words=TREES, layers=1, max_positions=256)
    overrides = _tiny_overrides(bert, d / "train.seq", d / "test.seq", d / "out") + [
        "name=tiny",
        "setting=low_resource",
        "low_resource.subsamples=2",
        "low_resource.only=[1]",
        "generation.chunk_size=4",
        "generation.samples_per_template=2",
        "parsing.chunk_size=2",
    ]
    for role in ("generator", "parser"):
        overrides += [
            f"stages.{role}.trainer.max_steps=2",
            f"stages.{role}.trainer.val_check_interval=2",
        ]
    cfg = compose_config("top", *overrides)
    return cfg, run(cfg), d


@pytest.mark.slow
def test_tiny_end_to_end(tiny_run):
    cfg, summary, d = tiny_run
    (r,) = summary["runs"]
    work = Path(cfg.out_dir) / "low_resource_1"
    # one utterance per template: 4 templates among the 5 trees
    assert r["train"] == r["templates"] == 4
    gen = r["generation"]
    assert gen["requested"] == 4 * 2 and gen["valid"] + gen["invalid"] == gen["requested"]
    assert sum(gen["invalid_by_kind"].values()) == gen["invalid"]
    syn = (work / "synthetic.txt").read_text().splitlines()
    assert len(syn) == r["synthetic_kept"]
    assert r["filter"]["total"] == gen["kept"] and r["filter"]["kept"] == r["synthetic_kept"]
    assert r["samples"] == {"real": 4, "real+syn": 4 + len(syn)}
    # nothing kept: the +syn parser is the Real one (reused), so are its predictions
    syn_dir = "eval_syn" if r["synthetic_kept"] else "eval_real"
    for key, sub in (("real", "eval_real"), ("real+syn", syn_dir)):
        em = r["exact_match"][key]
        assert em["overall"]["n"] == 3
        assert sum(em[b]["n"] for b in ("f>=5", "f<5", "f=0")) == 3
        preds = [json.loads(x) for x in (work / sub / "predictions.jsonl").open()]
        assert [p["gold"] for p in preds] == TREES[1:4]
        hits = sum(p["pred"] == p["gold"] for p in preds)
        assert em["overall"]["correct"] == hits
    for role in ("generator", "ap", "target_syn"):
        m = r["models"][role]
        assert m["steps"] == 2 and (Path(m["model_dir"]) / "top_module.json").exists()
        assert m["added_tokens"] == 2 * 4 + 1  # 4 labels, opening + closing, + [mask]
    assert (work / "samples.md").read_text().startswith("# Synthetic trees per template")
    agg = summary["aggregate"]["real"]["overall"]
    assert agg["n"] == 1 and agg["mean"] == r["exact_match"]["real"]["overall"]["exact_match"]
    assert json.loads((Path(cfg.out_dir) / "results.json").read_text())["setting"] == "low_resource"


@pytest.mark.slow
def test_rerun_reuses_every_finished_stage(tiny_run, monkeypatch):
    """With the setting's summary removed, a rerun rebuilds it from the finished stages:
    no training, no generation, no parsing."""
    from paraamr.top import pipeline
    from paraamr.top.module import TopModule

    cfg, summary, _ = tiny_run

    def forbidden(*a, **k):
        raise AssertionError("a finished stage ran again")

    monkeypatch.setattr("paraamr.training.fit.fit", forbidden)
    monkeypatch.setattr(TopModule, "generate", forbidden)
    (Path(cfg.out_dir) / "low_resource_1" / "setting.json").unlink()
    again = pipeline.run(cfg)
    assert again["runs"] == summary["runs"]


@pytest.mark.slow
def test_tables_from_the_tiny_run(tiny_run, tmp_path):
    from analysis.make_top import main

    cfg, summary, _ = tiny_run
    main(["--runs", str(Path(cfg.out_dir) / "results.json"), "--out", str(tmp_path), "--no-wandb"])
    md = (tmp_path / "table4.md").read_text()
    assert "72.24" in md and "74.31" in md  # the paper's Table 4 beside ours
    ours = summary["aggregate"]["real"]["overall"]["mean"]
    assert f"{ours:.2f}" in md
    table = json.loads((tmp_path / "table4.json").read_text())
    assert [r["data"] for r in table["rows"]] == ["Real", "+syn"]
    assert [p["exact_match"] for p in table["paper"]] == [72.24, 74.31]
    assert "| Real | ours (offline analogue) |" in md


@pytest.mark.slow
def test_nothing_kept_reuses_the_real_parser(tmp_path, compose_config, monkeypatch):
    """With every synthetic tree dropped by the filter, real + syn is the real data again: the
    auxiliary parser is reused (two trainings, not three) and both rows are its scores."""
    from tiny_bert import build_tiny_bert

    from paraamr.top import stages
    from paraamr.top.pipeline import run

    (tmp_path / "train.seq").write_text("\n".join(TREES) + "\n")
    bert = build_tiny_bert(tmp_path / "bert", extra_words=TREES, layers=1, max_positions=256)
    real_filter = stages.filter_samples

    class NothingKept:
        def __init__(self, res):
            self.res = res
            self.kept, self.kept_index = [], []

        def summary(self):
            return {**self.res.summary(), "kept": 0}

    monkeypatch.setattr(stages, "filter_samples", lambda *a, **k: NothingKept(real_filter(*a, **k)))
    trainings = _count_trainings(monkeypatch)
    cfg = compose_config(
        "top",
        *_tiny_overrides(bert, tmp_path / "train.seq", tmp_path / "train.seq", tmp_path / "out"),
        "generation.samples_per_template=1",
        "stages.generator.trainer.max_steps=1",
        "stages.parser.trainer.max_steps=1",
        "stages.generator.trainer.val_check_interval=1",
        "stages.parser.trainer.val_check_interval=1",
    )
    (r,) = run(cfg)["runs"]
    assert len(trainings) == 2  # generator + auxiliary parser
    assert r["synthetic_kept"] == 0 and r["samples"]["real+syn"] == r["samples"]["real"]
    assert r["exact_match"]["real+syn"] == r["exact_match"]["real"]
    assert r["models"]["target_syn"]["model_dir"] == r["models"]["ap"]["model_dir"]
    assert not (tmp_path / "out" / "full" / "target_syn").exists()


def test_multitask_decoder_only_run_shares_one_model(tmp_path, compose_config, monkeypatch):
    """``multitask=true`` with a tiny decoder-only LM and constrained decoding: one model is the
    generator, the auxiliary parser and the Real parser (two trainings when something is kept),
    the +syn model learns the generator pairs too, and every test parse is a valid tree with
    the utterance's words (the constraint), whatever the two training steps taught."""
    from paraamr.testing.tiny_models import build_tiny_causal_lm
    from paraamr.top.pipeline import run
    from paraamr.top.trees import parse_tree, utterance

    (tmp_path / "train.seq").write_text("\n".join(TREES) + "\n")
    lm = build_tiny_causal_lm(tmp_path / "gpt2")
    trainings = _count_trainings(monkeypatch)
    cfg = compose_config(
        "top",
        *_tiny_overrides(
            lm, tmp_path / "train.seq", tmp_path / "train.seq", tmp_path / "out", "top_smollm2"
        ),
        "model.freeze_layers=1",
        "model.max_target_length=40",
        "generation.max_new_tokens=40",
        "multitask=true",
        "generation.samples_per_template=2",
        "stages.parser.trainer.max_steps=2",
        "stages.parser.trainer.val_check_interval=2",
    )
    (r,) = run(cfg)["runs"]
    work = tmp_path / "out" / "full"
    assert (work / "multitask" / "model" / "top_module.json").exists()
    assert not (work / "generator").exists() and not (work / "ap").exists()
    saved = json.loads((work / "multitask" / "model" / "top_module.json").read_text())
    assert saved["max_depth"] == 2  # model.max_depth=auto: TREES nest a slot in an intent
    models = r["models"]
    assert models["generator"]["model_dir"] == models["ap"]["model_dir"]
    assert models["generator"]["train_pairs"] == 2 * len(TREES)  # generator + parser pairs
    kept = r["synthetic_kept"]
    if kept:
        assert len(trainings) == 2
        assert models["target_syn"]["train_pairs"] == 2 * len(TREES) + kept
    else:
        assert len(trainings) == 1
    assert "multitask:True" in r["signature"]["parser"]
    assert "constrained:True" in r["signature"]["parser"]
    preds = [json.loads(x) for x in (work / "eval_real" / "predictions.jsonl").open()]
    assert [utterance(parse_tree(p["pred"])) for p in preds] == [
        utterance(parse_tree(t)) for t in TREES
    ]
    gen = r["generation"]
    assert gen["generated"] == gen["requested"] and gen["template_matching"] <= gen["valid"]


def test_signature_fields_read_back(compose_config):
    """The TOP signature is a Signature: every part is key:value (``top|parser|`` was not)."""
    from paraamr.signature import Signature
    from paraamr.top.pipeline import signature

    cfg = compose_config("top", "seed=3")
    fields = Signature(signature(cfg, "parser")).fields
    assert fields["top"] == "parser" and fields["seed"] == "3"
    assert fields["model"] == str(cfg.model.model_name_or_path)
    assert "grouped" not in fields and "loss" not in fields  # the defaults keep older names
    cfg = compose_config("top", "data.group_by_length=true", "data.loss_norm=corpus")
    fields = Signature(signature(cfg, "generator")).fields
    assert (fields["grouped"], fields["loss"]) == ("True", "corpus")


def test_seeds_pool_across_a_setting_added_later_but_not_across_different_values():
    """A run made before ``model.max_depth`` existed and one with ``max_depth: null`` are one
    configuration (pooled: mean of 30 and 40), their checkpoint folders under their own
    ``out_dir`` notwithstanding; ``max_depth: 6`` is another (its own row)."""
    from paraamr.tables.top import pool_seeds

    def run(seed, em, **model):
        r = {"exact_match": {k: {"overall": {"exact_match": em}} for k in ("real", "real+syn")},
             "samples": {"real": 10, "real+syn": 12}}  # fmt: skip
        cfg = {"seed": seed, "out_dir": f"o/seed{seed}", "model": {"lr": 1, **model},
               "callbacks": {"checkpoint": {"dirpath": f"o/seed{seed}/checkpoints"}}}  # fmt: skip
        return {"name": "w", "setting": "full", "runs": [r], "config": cfg}

    pooled = pool_seeds([run(0, 30.0, max_depth=None), run(2, 40.0), run(1, 50.0, max_depth=6)])
    by_seeds = {tuple(p["seeds"]): p for p in pooled}
    assert set(by_seeds) == {(0, 2), (1,)}
    assert by_seeds[0, 2]["aggregate"]["real"]["overall"]["mean"] == 35.0


def test_seeds_pool_by_signature_and_the_signature_names_data_and_filter(compose_config):
    """The record's ``config`` field changes with the data and the AP filter, not with the seed
    or the output folder; records pool only when their signatures agree but for ``seed:N``, and a
    record written without the field gets it from its config."""
    from omegaconf import OmegaConf

    from paraamr.signature import config_digest
    from paraamr.tables.top import pool_seeds

    def digest(*overrides):
        cfg = compose_config("top", *overrides)
        return config_digest(OmegaConf.to_container(cfg, resolve=True))

    base = digest("seed=0", "out_dir=o/s0")
    assert digest("seed=1", "out_dir=o/s1") == base
    assert digest("seed=0", "out_dir=o/s0", "data.train=/x/other.tsv") != base
    assert digest("seed=0", "out_dir=o/s0", "filter.enabled=false") != base

    def rec(seed, em, sig, data="a"):
        r = {"exact_match": {k: {"overall": {"exact_match": em}} for k in ("real", "real+syn")},
             "samples": {"real": 10, "real+syn": 12}}  # fmt: skip
        cfg = {"seed": seed, "out_dir": f"o/{seed}", "data": {"train": data}}
        return {"name": "w", "setting": "full", "runs": [r], "config": cfg,
                "signature": sig.format(seed=seed)}  # fmt: skip

    pooled = pool_seeds([rec(0, 30.0, "top:parser|seed:{seed}|config:aaa"),
                         rec(1, 40.0, "top:parser|seed:{seed}|config:aaa"),
                         rec(2, 50.0, "top:parser|seed:{seed}|config:bbb"),
                         rec(3, 60.0, "top:parser|seed:{seed}", data="a"),
                         rec(4, 70.0, "top:parser|seed:{seed}", data="a"),
                         rec(5, 80.0, "top:parser|seed:{seed}", data="b")])  # fmt: skip
    assert sorted(tuple(p["seeds"]) for p in pooled) == [(0, 1), (2,), (3, 4), (5,)]
    names = {tuple(p["seeds"]): p["name"] for p in pooled}
    assert names[0, 1] == "w [config:aaa]" and names[2,] == "w [config:bbb]"
    assert len(set(names.values())) == 4  # every row says what sets it apart
    # where the data sit on a machine, logging and progress bars do not split seeds
    a = {"seed": 0, "out_dir": "o/s1", "lr": 1, "ckpt": "o/s1/c", "paths": {"data_dir": "/a"},
         "generation": {"chunk_size": 32}}  # fmt: skip
    b = {"seed": 1, "out_dir": "o/s10", "lr": 1, "ckpt": "o/s10/c", "paths": {"data_dir": "/b"},
         "progress": False, "generation": {"chunk_size": 8}}  # fmt: skip
    assert config_digest(a) == config_digest(b)
    assert config_digest(a) != config_digest({**a, "generation": {"top_p": 0.5}})
    # a path in another folder is not the run's own ("o/s10" is not under "o/s1"): two seeds
    # starting from one shared checkpoint agree
    c = {"seed": 0, "out_dir": "o/s1", "lr": 1, "init": "o/s10/c"}
    assert config_digest(c) == config_digest({**c, "seed": 1, "out_dir": "o/s2"})
