"""Corpus builder entry point: ``python experiments/build.py input=FILE [overrides]``
(see conf/build.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.builder.run import run_build


@hydra.main(version_base="1.3", config_path="../conf", config_name="build")
def main(cfg: DictConfig) -> None:
    run_build(cfg)


if __name__ == "__main__":
    main()
