"""STS entry point: ``python experiments/sts.py [overrides]`` (see conf/sts.yaml).

Writes ``<out_dir>/sts.json`` (``model``, ``signature``, ``years``, ``subsets``, ``avg``,
``avg_7``, ``counts``) and prints a markdown table.
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from paraamr.presets import hydra_entry
from paraamr.sts import markdown_table, run_sts


@hydra.main(version_base="1.3", config_path="../conf", config_name="sts")
@hydra_entry("sts")
def main(cfg: DictConfig) -> dict:
    res = run_sts(
        cfg.encoder,
        data_dir=cfg.paths.data_dir,
        layout=cfg.layout,
        include=list(cfg.include) if cfg.include else None,
        batch_size=cfg.batch_size,
        device=cfg.device,
        out_dir=cfg.out_dir,
    )
    print(f"\n{res['signature']}\n")
    print(markdown_table(res))
    print(
        f"\n{res['n_sentences']} distinct sentences, {res['wall_s']:.1f}s -> {cfg.out_dir}/sts.json"
    )
    return res


if __name__ == "__main__":
    main()
