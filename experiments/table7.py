"""Table 7 job: ``python experiments/table7.py [task=...] [k=...] [augment=...] [seed=...]`` trains
one few-shot classifier and evaluates it (see conf/fewshot.yaml and paraamr.fewshot.job)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.fewshot.job import run_job
from paraamr.presets import hydra_entry


@hydra.main(version_base="1.3", config_path="../conf", config_name="fewshot")
@hydra_entry("fewshot")
def main(cfg: DictConfig) -> None:
    run_job(cfg)


if __name__ == "__main__":
    main()
