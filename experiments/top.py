"""TOP synthetic-data entry point: ``python experiments/top.py [overrides]`` (see conf/top.yaml;
the paper's setting: ``+experiment=top_paper trainer=gpu``)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.top.pipeline import run


@hydra.main(version_base="1.3", config_path="../conf", config_name="top")
@hydra_entry("top")
def main(cfg: DictConfig) -> None:
    summary = run(cfg)
    for key, agg in summary["aggregate"].items():
        print(key, {b: v["mean"] for b, v in agg.items()})


if __name__ == "__main__":
    main()
