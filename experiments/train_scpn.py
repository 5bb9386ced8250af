"""SCPN training entry point: ``python experiments/train_scpn.py [overrides]``
(see conf/scpn.yaml; the paper's setting: ``+experiment=scpn_paper``)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.scpn.train import train


@hydra.main(version_base="1.3", config_path="../conf", config_name="scpn")
@hydra_entry("scpn")
def main(cfg: DictConfig) -> float:
    result = train(cfg)
    print(result)
    return result["best_val"]


if __name__ == "__main__":
    main()
