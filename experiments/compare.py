"""Corpora compared downstream under one policy: ``python experiments/compare.py
corpora="A=FILE B=FILE" [tasks=[table5,table6]] [seeds=[0,1,2]]`` (see conf/compare.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.compare.run import run_compare
from paraamr.presets import hydra_entry


@hydra.main(version_base="1.3", config_path="../conf", config_name="compare")
@hydra_entry("compare")
def main(cfg: DictConfig) -> None:
    run_compare(cfg)


if __name__ == "__main__":
    main()
