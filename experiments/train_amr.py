"""AMR parser + generator training entry point: ``python experiments/train_amr.py [overrides]``
(see conf/amr.yaml)."""

from __future__ import annotations

import json

import hydra
from omegaconf import DictConfig

from paraamr.amrlm.train import check_trained, train
from paraamr.presets import hydra_entry


@hydra.main(version_base="1.3", config_path="../conf", config_name="amr")
@hydra_entry("amr")
def main(cfg: DictConfig) -> None:
    if cfg.get("check_only", False):  # make amr-model on a folder that exists
        for folder in check_trained(cfg):
            print(f"{folder}: trained with these settings, reused")
        return
    result = train(cfg)
    print(json.dumps({d: {k: v for k, v in s.items() if k != "signature"}
                      for d, s in result["directions"].items()}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
