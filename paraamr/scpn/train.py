"""Train an SCPN paraphraser (or its parse generator) from a Hydra config (``conf/scpn.yaml``).

Steps: build the module (``model/scpn_*``), the parser (``parser/``), the pairs and data module
(``data/scpn``), fit with :func:`paraamr.training.fit.fit` (the finite-loss guard, dev loss every
``val_every`` steps, best checkpoint by it + ``last.ckpt``, CSV + W&B loggers; ``resume``
continues mid-epoch), then write the best weights with ``save_pretrained`` to
``<out_dir>/best_model`` (loadable by plain transformers) with ``scpn.json`` (format, lengths,
parser, data) and ``parse_index.json`` (the retrieval parse generator of the training pairs).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig

from paraamr.utils import write_json_atomic

__all__ = ["train", "BEST_MODEL"]

log = logging.getLogger(__name__)

BEST_MODEL = "best_model"


def train(cfg: DictConfig) -> dict[str, Any]:
    """Run one training; returns ``{"best_model", "best_val", "steps", ...}``.

    ``best_model`` is ``None`` under ``fast_dev_run``; ``best_val`` the best dev loss (NaN when
    no evaluation ran: the final weights are written).

    Raises:
        TrainingError: the loss became NaN/inf (before any checkpoint of that step is written).
    """
    from hydra.utils import instantiate

    from paraamr.scpn.parse_generator import PARSE_INDEX, RetrievalParseGenerator
    from paraamr.training.fit import fit, restore_best, seed_run

    out_dir = Path(cfg.out_dir)
    seed_run(int(cfg.seed))
    module = instantiate(cfg.model)
    parser = instantiate(cfg.parser)
    dm = instantiate(
        cfg.data,
        encoder=module.encoder,
        parser=parser,
        task=cfg.get("task", "paraphrase"),
        data_dir=cfg.paths.data_dir,
        seed=int(cfg.seed),
    )
    res = fit(cfg, module, dm)
    trainer, ckpt = res.trainer, res.checkpoint
    csv = next((lg for lg in res.loggers if type(lg).__name__ == "CSVLogger"), None)
    result: dict[str, Any] = {
        "best_model": None,
        "best_val": math.nan,
        "steps": int(trainer.global_step),
        "best_checkpoint": (ckpt.best_model_path or None) if ckpt else None,
        "last_checkpoint": (ckpt.last_model_path or None) if ckpt else None,
        "log_dir": csv.log_dir if csv is not None else None,
        "num_train_pairs": len(dm.examples),
        "num_dev_pairs": len(dm.dev),
        "pair_stats": dict(dm.pairs.stats),
        "truncated": dict(module.encoder.truncated),
    }
    if ckpt is not None and ckpt.best_model_score is not None:
        result["best_val"] = float(ckpt.best_model_score)
    if trainer.is_global_zero and not trainer.fast_dev_run:
        if not restore_best(module, ckpt):
            log.warning("no dev evaluation ran; writing the final weights")
        extra = {
            "parser": dm.pairs.parser,
            "corpus": cfg.get("corpus"),
            "data": _data_paths(cfg.data.path),
            "task": cfg.get("task", "paraphrase"),
            "seed": int(cfg.seed),
            "steps": result["steps"],
            "best_dev_loss": result["best_val"],
        }
        best = module.save(out_dir / BEST_MODEL, extra)
        RetrievalParseGenerator.from_pairs(dm.pairs.train).save(best / PARSE_INDEX)
        result["best_model"] = str(best)
    write_json_atomic(out_dir / "train_result.json", result, default=str, sort_keys=False)
    log.info("SCPN training done: %s", result)
    return result


def _data_paths(path: Any) -> str | list[str]:
    """``data.path`` for the sidecar: one path, or the list of a pooled run."""
    return [str(p) for p in path] if isinstance(path, (list, ListConfig)) else str(path)
