"""Corpus builder entry point: ``python experiments/build.py input=FILE [overrides]``
(see conf/build.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.tables.table1 import build_corpus


@hydra.main(version_base="1.3", config_path="../conf", config_name="build")
@hydra_entry("build")
def main(cfg: DictConfig) -> None:
    build_corpus(cfg)


if __name__ == "__main__":
    main()
