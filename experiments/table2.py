"""Table 2 entry point: ``python experiments/table2.py [overrides]`` (see conf/table2.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.tables.run_table2 import run_table2


@hydra.main(version_base="1.3", config_path="../conf", config_name="table2")
@hydra_entry("table2")
def main(cfg: DictConfig) -> None:
    run_table2(cfg)


if __name__ == "__main__":
    main()
