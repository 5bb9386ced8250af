"""Hydra multirun over shards (joblib launcher, separate processes) + merge == one unsharded run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paraamr.diversity.scoring import METRICS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_sharded_multirun_merges_to_unsharded(tmp_path, data_dir):
    env = {**os.environ, "WANDB_MODE": "offline", "PARAAMR_DATA": str(data_dir)}
    common = ["limit=16", "progress=false", "wandb.enabled=false"]
    subprocess.run(
        [
            sys.executable,
            "experiments/table2.py",
            "-m",
            "hydra/launcher=local",
            "num_shards=2",
            "shard=0,1",
            "merge=false",
            f"out_dir={tmp_path}/many",
            *common,
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )
    subprocess.run(
        [
            sys.executable,
            "analysis/make_table2.py",
            "--out",
            f"{tmp_path}/many",
            "--names",
            "ParaNMT",
            "ParaBank1",
            "--no-wandb",
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )
    subprocess.run(
        [sys.executable, "experiments/table2.py", f"out_dir={tmp_path}/one", *common],
        cwd=ROOT,
        env=env,
        check=True,
    )
    many = json.loads((tmp_path / "many" / "table2.json").read_text())["rows"]
    one = json.loads((tmp_path / "one" / "table2.json").read_text())["rows"]
    for a, b in zip(one, many, strict=True):
        for k in ("n_sources", "n_pairs", *METRICS):
            assert a[k] == pytest.approx(b[k], abs=2e-3), (a["dataset"], k)


@pytest.mark.slow
def test_slurm_launcher_config_composes():
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        c = compose("table2", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
    assert c.hydra.launcher.gpus_per_node == 1
    assert "submitit" in c.hydra.launcher._target_
