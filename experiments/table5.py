"""Table 5 job: ``python experiments/table5.py [train_corpus=...] [seed=...]`` trains SimCSE on one
corpus with one seed and evaluates it on STS (see conf/table5.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.simcse.job import run_job


@hydra.main(version_base="1.3", config_path="../conf", config_name="table5")
@hydra_entry("table5")
def main(cfg: DictConfig) -> None:
    run_job(cfg)


if __name__ == "__main__":
    main()
