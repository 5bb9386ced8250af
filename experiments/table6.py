"""Table 6 job: ``python experiments/table6.py [train_corpus=...] [seed=...]`` trains SCPN on one
corpus with one seed and evaluates it on the test sets (see conf/table6.yaml)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.scpn.job import run_job


@hydra.main(version_base="1.3", config_path="../conf", config_name="table6")
@hydra_entry("table6")
def main(cfg: DictConfig) -> None:
    run_job(cfg)


if __name__ == "__main__":
    main()
