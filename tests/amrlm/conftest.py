"""Fixtures of the AMR model tests: a tiny GPT-2 and the trainer run on it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="package")
def tiny_gpt2(tmp_path_factory) -> Path:
    from paraamr.testing.tiny_models import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture
def train_amr(tiny_gpt2, data_dir) -> Callable[..., dict[str, Any]]:
    """``train_amr(out_dir, *overrides)``: ``experiments/train_amr.py`` on the tiny model, two
    steps per direction, 4 training graphs of each file, 2 dev and 2 test graphs."""
    from hydra import compose, initialize_config_dir

    from paraamr.amrlm.train import train

    def run(out_dir: Path, *extra: str) -> dict[str, Any]:
        overrides = [
            f"out_dir={out_dir}", f"paths.data_dir={data_dir}",
            f"model.model_name_or_path={tiny_gpt2}",
            "model.freeze_layers=null", "trainer.precision=32", "logger.wandb.enabled=false",
            "stages.parser.trainer.max_steps=2", "stages.generator.trainer.max_steps=2",
            "stages.parser.trainer.val_check_interval=1",
            "stages.generator.trainer.val_check_interval=1",
            "data.limit_train=4", "data.limit_dev=2", "data.limit_test=2", "progress=false",
            "stages.parser.model.max_source_length=32",
            "stages.parser.model.max_target_length=48",
            "stages.generator.model.max_source_length=64",
            "stages.generator.model.max_target_length=16",
            *extra,
        ]  # fmt: skip
        with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
            cfg = compose("amr", overrides=overrides)
        return train(cfg)

    return run
