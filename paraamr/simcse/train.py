"""Train supervised SimCSE from a Hydra config (``conf/simcse.yaml``); tests call :func:`train`.

Steps: build the module (``model/simcse``) and the triplet data module (``data/simcse``) from the
config, fit with the shared trainer (:func:`paraamr.training.fit.fit`: STS-B dev callback,
a :class:`~pytorch_lightning.callbacks.ModelCheckpoint` on ``val/stsb_spearman`` (max, plus
``last.ckpt``), the finite-loss guard, CSV + W&B loggers; ``resume`` continues mid-epoch), then
export the best checkpoint as a sentence-transformers model to ``<out_dir>/best_model``.

Outputs under ``cfg.out_dir``: ``checkpoints/`` (Lightning), ``csv/version_*/metrics.csv``,
``wandb/`` (offline runs unless ``WANDB_MODE``/``wandb.mode`` says otherwise), ``best_model/``.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, open_dict

__all__ = ["train", "input_paths"]

log = logging.getLogger(__name__)

BEST_MODEL = "best_model"


def input_paths(cfg: DictConfig) -> tuple[str, str, str]:
    """``(model path, training data path, STS-B dev path)`` with the config's defaults applied.

    ``model.model_name_or_path`` goes through :func:`paraamr.lms.loading.resolve_backbone`
    (``minilm`` -> the packaged offline MiniLM); a null ``data.path`` is the ParaBank-Eval
    directory and a null ``callbacks.sts_dev.path`` the GLUE STS-B dev file under the data
    directory.
    """
    from paraamr.lms.loading import resolve_backbone
    from paraamr.simcse.module import STSB_DEV

    model = resolve_backbone(str(cfg.model.model_name_or_path))
    corpus, stsb = cfg.data.path, cfg.callbacks.sts_dev.get("path")
    if not corpus or not stsb:
        from paraamr.datadir import data_path

        root = data_path(cfg.paths.data_dir)
        corpus = corpus or str(root / "paraphrase" / "parabank-eval")
        stsb = stsb or str(root / STSB_DEV)
    return model, str(corpus), str(stsb)


def train(cfg: DictConfig) -> dict[str, Any]:
    """Run one SimCSE training; returns ``{"best_model", "best_val", "steps", ...}``.

    Module, data, trainer, callbacks and loggers come from the config groups (``model/simcse``,
    ``data/simcse``, ``trainer/``, ``callbacks/simcse``, ``logger/``) through
    :func:`paraamr.training.fit.fit`.

    ``best_model`` is the exported sentence-transformers directory (``None`` under
    ``fast_dev_run``, which writes no checkpoint); ``best_val`` the best STS-B dev Spearman
    (NaN when no evaluation ran, in which case the final weights are exported); ``steps`` the
    optimizer steps done (resumed steps included). Also ``best_checkpoint``,
    ``last_checkpoint``, ``log_dir`` and ``num_triplets``.

    Raises:
        RuntimeError: the loss became NaN/inf (before any checkpoint of that step is written).
    """
    from hydra.utils import instantiate

    from paraamr.simcse.module import save_sentence_transformer
    from paraamr.training.fit import fit, restore_best, seed_run

    out_dir = Path(cfg.out_dir)
    _, data_path, stsb_path = input_paths(cfg)
    cfg = cfg.copy()
    with open_dict(cfg):
        cfg.data.path = data_path
        cfg.callbacks.sts_dev.path = stsb_path
    seed_run(int(cfg.seed))
    module = instantiate(cfg.model)
    dm = instantiate(cfg.data, tokenizer=module.tokenizer, seed=int(cfg.seed))
    res = fit(cfg, module, dm)
    trainer, ckpt_cb = res.trainer, res.checkpoint
    csv = next((lg for lg in res.loggers if type(lg).__name__ == "CSVLogger"), None)
    result: dict[str, Any] = {
        "best_model": None,
        "best_val": math.nan,
        "steps": int(trainer.global_step),
        "best_checkpoint": (ckpt_cb.best_model_path or None) if ckpt_cb else None,
        "last_checkpoint": (ckpt_cb.last_model_path or None) if ckpt_cb else None,
        "log_dir": csv.log_dir if csv is not None else None,
        "num_triplets": len(dm.triplets),
    }
    if ckpt_cb is not None and ckpt_cb.best_model_score is not None:
        result["best_val"] = float(ckpt_cb.best_model_score)
    if trainer.is_global_zero and not trainer.fast_dev_run:
        if not restore_best(module, ckpt_cb):
            log.warning("no STS-B dev evaluation ran; exporting the final weights")
        result["best_model"] = str(
            save_sentence_transformer(
                module, out_dir / BEST_MODEL, cfg.get("export_max_seq_length")
            )
        )
    log.info("SimCSE done: %s", result)
    return result
