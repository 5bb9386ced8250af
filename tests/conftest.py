from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# the literal ports of other projects' code (tests/metrics/ted_originals.py) are imported by
# tests outside tests/metrics too; on sys.path here, so no test depends on collection order
sys.path.insert(0, str(Path(__file__).parent / "metrics"))
# helpers only tests use (tiny BERT / BART backbones, the W&B offline-run reader): tests/testkit,
# imported by module name (`from tiny_top import build_tiny_bart`); what users run too (the tiny
# models of `make tiny-models` and `make build-demo`, the fault injector) stays in paraamr.testing
sys.path.insert(0, str(Path(__file__).parent / "testkit"))

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_SILENT", "true")

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


@pytest.fixture(scope="session")
def ptb_trees(data_dir):
    """Cleaned gold trees from the Penn Treebank sample (first 20 files)."""
    from paraamr.metrics.trees import clean_ptb, parse_many

    trees = []
    for f in sorted((data_dir / "ptb-sample" / "combined").glob("wsj_*.mrg"))[:20]:
        for t in parse_many(f.read_text()):
            c = clean_ptb(t)
            if c is not None:
                trees.append(c)
    return trees


@pytest.fixture(scope="session")
def parabank_eval(data_dir):
    return data_dir / "paraphrase" / "parabank-eval"


@pytest.fixture(scope="session")
def minilm():
    from paraamr.metrics.semantic import load_encoder

    return load_encoder("minilm", "cpu")


@pytest.fixture(scope="session")
def compose_config():
    """``compose_config(name, *overrides)``: a project config composed with Hydra's compose API,
    its ``paths`` resolved as the entry points do (:func:`paraamr.datadir.resolve_paths`)."""
    from hydra import compose, initialize_config_dir

    from paraamr.datadir import resolve_paths

    def _compose(name: str, *overrides: str):
        with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
            cfg = compose(name, overrides=list(overrides))
        resolve_paths(cfg)
        return cfg

    return _compose


# SCPN training on a tiny model (tests/scpn, tests/tables/test_table6.py) ----------------------
SCPN_SENTS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("He bought a new car yesterday.", "Yesterday he purchased a new car."),
    ("She is reading a book.", "A book is being read by her."),
    ("We will meet at noon.", "At noon we will meet."),
    ("The weather is nice today.", "Today the weather is pleasant."),
    ("They won the match easily.", "The match was won easily by them."),
    ("I forgot my keys at home.", "My keys were left at home."),
    ("The train arrived late.", "The train was late."),
    ("Birds fly south in winter.", "In winter, birds fly south."),
    ("He plays the guitar well.", "He is good at playing the guitar."),
    ("The shop closes at nine.", "At nine the shop closes."),
    ("Can you help me with this?", "Could you help me with this?"),
]


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """A tiny random GPT-2 dir (2 blocks, 128 positions) in the real on-disk format."""
    from paraamr.testing.tiny_models import build_tiny_causal_lm

    return str(build_tiny_causal_lm(tmp_path_factory.mktemp("gpt2")))


@pytest.fixture
def train_amr(tiny_gpt2, data_dir):
    """``train_amr(out_dir, *overrides)``: ``experiments/train_amr.py`` on the tiny model, two
    steps per direction, 4 training graphs of each file, 2 dev and 2 test graphs;
    ``train_amr.overrides``: those settings, for a command line (``out_dir`` left out)."""
    from hydra import compose, initialize_config_dir

    from paraamr.amrlm.train import train

    def tiny(*extra):
        return [
            f"paths.data_dir={data_dir}",
            f"model.model_name_or_path={tiny_gpt2}",
            "model.freeze_layers=null", "stages.generator.model.freeze_layers=null",
            "trainer.precision=32", "logger.wandb.enabled=false",
            "stages.parser.trainer.max_steps=2", "stages.generator.trainer.max_steps=2",
            "stages.parser.trainer.val_check_interval=1",
            "stages.generator.trainer.val_check_interval=1",
            "data.limit_train=4", "data.limit_dev=2", "data.limit_test=2", "progress=false",
            "data.silver_sentences=null",
            "stages.parser.model.max_source_length=32",
            "stages.parser.model.max_target_length=48",
            "stages.generator.model.max_source_length=64",
            "stages.generator.model.max_target_length=16",
            *extra,
        ]  # fmt: skip

    def run(out_dir, *extra):
        conf = Path(__file__).resolve().parents[1] / "conf"
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            cfg = compose("amr", overrides=[f"out_dir={out_dir}", *tiny(*extra)])
        return train(cfg)

    run.overrides = tiny
    return run


@pytest.fixture(scope="module")
def pairs_tsv(tmp_path_factory):
    """Twelve hand-written source<TAB>paraphrase pairs."""
    p = tmp_path_factory.mktemp("corpus") / "pairs.tsv"
    p.write_text("".join(f"{a}\t{b}\n" for a, b in SCPN_SENTS), encoding="utf-8")
    return p


@pytest.fixture(scope="session")
def scpn_train_cfg(compose_config):
    """``scpn_train_cfg(out, model_path, corpus, *overrides, name="scpn")``: a 2-step SCPN
    training config for a tiny model."""

    def _train(out, model_path, corpus, *extra, name="scpn"):
        return compose_config(
            name,
            f"out_dir={out}",
            f"model.model_name_or_path={model_path}",
            "model.freeze_layers=1",  # the tiny model has 2 blocks
            "model.max_target_length=40",  # its 128 positions hold prompt + tree answer
            f"data.path={corpus}",
            "data.format=pairs",
            "data.dev_sources=3",
            "data.batch_size=4",
            "data.limit_dev=4",
            "trainer.max_steps=2",
            "trainer.enable_progress_bar=false",
            "val_every=2",
            "logger.wandb.enabled=false",
            *extra,
        )

    return _train
