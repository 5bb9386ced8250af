"""The offline build as one preset, and errors that name it when an online model is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_offline_preset_picks_every_model_trained_or_packaged_here(compose_config):
    cfg = compose_config("build", "+experiment=build_offline", "amr_model=/m", "input=x.txt")
    assert cfg.stog.model_dir == cfg.generator.model_dir == "/m"
    assert cfg.lm.name == "smollm2"


def test_the_default_build_offline_names_the_offline_preset(tmp_path):
    src = tmp_path / "s.txt"
    src.write_text("The boy wants to go.\n")
    out = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "build.py"), f"input={src}",
         f"out_dir={tmp_path / 'o'}", f"models_dir={tmp_path / 'models'}"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    err = out.stderr.strip()
    assert out.returncode == 2 and len(err.splitlines()) == 1
    assert "+experiment=build_offline amr_model=DIR" in err


def test_an_lm_the_hub_would_give_names_the_packaged_one_offline(monkeypatch):
    from paraamr.errors import DataNotFoundError
    from paraamr.lms import resolve_lm

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataNotFoundError, match=r"lm=smollm2 .*\+experiment=build_offline"):
        resolve_lm("no-such-org/no-such-lm")
