"""Validity entry point: ``python experiments/validity.py [overrides]`` (see conf/validity.yaml).

Writes ``<out_dir>/validity.{md,json}``, ``pairs.tsv`` and the plots, logs W&B group
``validity``, and prints the markdown report.
"""

from __future__ import annotations

from pathlib import Path

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.validity.run import run_validity


@hydra.main(version_base="1.3", config_path="../conf", config_name="validity")
@hydra_entry("validity")
def main(cfg: DictConfig) -> dict:
    res = run_validity(cfg)
    print(Path(res["paths"]["md"]).read_text(encoding="utf-8"))
    print(f"{res['timing_s']['total']:.0f}s -> {cfg.out_dir}/validity.md")
    return res


if __name__ == "__main__":
    main()
