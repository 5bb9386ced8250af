from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    """``compose_config(name, *overrides)``: a project config composed with Hydra's compose API."""
    from hydra import compose, initialize_config_dir

    def _compose(name: str, *overrides: str):
        with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
            return compose(name, overrides=list(overrides))

    return _compose
