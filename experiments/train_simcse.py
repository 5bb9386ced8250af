"""Supervised SimCSE entry point: ``python experiments/train_simcse.py [overrides]``
(see conf/simcse.yaml; the paper's setting: ``+experiment=simcse_paper``)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.simcse.train import train


@hydra.main(version_base="1.3", config_path="../conf", config_name="simcse")
@hydra_entry("simcse")
def main(cfg: DictConfig) -> float:
    result = train(cfg)
    print(result)
    return result["best_val"]


if __name__ == "__main__":
    main()
