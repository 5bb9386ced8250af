"""Train supervised SimCSE from a Hydra config (``conf/simcse.yaml``); tests call :func:`train`.

Steps: seed everything, read triplets (:mod:`paraamr.simcse.data`), build the module, the STS-B
dev callback and a :class:`~pytorch_lightning.callbacks.ModelCheckpoint` on
``val/stsb_spearman`` (max, plus ``last.ckpt``), fit (optionally resuming from ``cfg.resume``),
then export the best checkpoint as a sentence-transformers model to ``<out_dir>/best_model``.

Outputs under ``cfg.out_dir``: ``checkpoints/`` (Lightning), ``csv/version_*/metrics.csv``,
``wandb/`` (offline runs unless ``WANDB_MODE``/``wandb.mode`` says otherwise), ``best_model/``.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

__all__ = ["train", "resolve_paths"]

log = logging.getLogger(__name__)

BEST_MODEL = "best_model"
METRIC = "val/stsb_spearman"


def resolve_paths(cfg: DictConfig) -> tuple[str, str, str]:
    """``(model path, training data path, STS-B dev path)`` with the config's defaults applied.

    ``model.name_or_path`` goes through :func:`paraamr.metrics.semantic.resolve_model`
    (``minilm`` -> the packaged offline MiniLM); a null ``data.path`` is the ParaBank-Eval
    directory and a null ``stsb_dev`` the GLUE STS-B dev file under the data directory.
    """
    from paraamr.metrics.semantic import resolve_model
    from paraamr.simcse.module import STSB_DEV

    model = resolve_model(str(cfg.model.name_or_path))
    data_path, stsb = cfg.data.path, cfg.get("stsb_dev")
    if not data_path or not stsb:
        from paraamr.data import resolve_data_dir

        root = resolve_data_dir(cfg.get("data_dir"))
        data_path = data_path or str(root / "paraphrase" / "parabank-eval")
        stsb = stsb or str(root / STSB_DEV)
    return model, str(data_path), str(stsb)


def _loggers(cfg: DictConfig, out_dir: Path) -> tuple[list[Any], bool]:
    from pytorch_lightning.loggers import CSVLogger

    from paraamr.tracking import wandb_mode

    loggers: list[Any] = [CSVLogger(str(out_dir), name="csv")]
    w = cfg.get("wandb") or {}
    use_wandb = bool(w.get("enabled", False)) and wandb_mode(w.get("mode")) != "disabled"
    if use_wandb:
        from pytorch_lightning.loggers import WandbLogger

        loggers.append(
            WandbLogger(
                project=w.get("project", "paraamr"),
                group=w.get("group"),
                name=w.get("name"),
                save_dir=str(out_dir),
                mode=wandb_mode(w.get("mode")),
                config=OmegaConf.to_container(cfg, resolve=True),
            )
        )
    return loggers, use_wandb


def train(cfg: DictConfig) -> dict[str, Any]:
    """Run one SimCSE training; returns ``{"best_model", "best_val", "steps", ...}``.

    ``best_model`` is the exported sentence-transformers directory (``None`` under
    ``fast_dev_run``, which writes no checkpoint); ``best_val`` the best STS-B dev Spearman
    (NaN when no evaluation ran, in which case the final weights are exported); ``steps`` the
    optimizer steps done (resumed steps included). Also ``best_checkpoint``,
    ``last_checkpoint``, ``log_dir`` and ``num_triplets``.

    Raises:
        RuntimeError: the loss became NaN/inf (before any checkpoint of that step is written).
    """
    import pytorch_lightning as pl
    import torch
    from pytorch_lightning.callbacks import ModelCheckpoint

    from paraamr.simcse.data import SimCSEDataModule, load_triplets
    from paraamr.simcse.module import (
        SimCSEModule,
        StsbDevEvaluator,
        StsDevCallback,
        read_stsb_dev,
        save_sentence_transformer,
    )

    pl.seed_everything(int(cfg.seed), workers=True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t = cfg.trainer
    model_path, data_path, stsb_path = resolve_paths(cfg)
    d = cfg.data
    triplets = load_triplets(
        data_path,
        d.get("format"),
        max_perplexity=d.get("max_perplexity"),
        max_paraphrases_per_source=d.get("max_paraphrases_per_source"),
        limit=d.get("limit"),
        seed=int(cfg.seed),
        on_error=d.get("on_error", "raise"),
    )
    tokenizer = cfg.model.get("tokenizer") or model_path
    dm = SimCSEDataModule(
        triplets,
        tokenizer,
        max_seq_length=int(cfg.max_seq_length),
        batch_size=int(cfg.batch_size),
        seed=int(cfg.seed),
        num_workers=int(cfg.get("num_workers", 0)),
    )
    module = SimCSEModule(
        model_path,
        pooling=cfg.pooling,
        temperature=float(cfg.temperature),
        hard_negative_weight=float(cfg.hard_negative_weight),
        lr=float(cfg.lr),
        weight_decay=float(cfg.get("weight_decay", 0.0)),
        warmup_steps=int(cfg.warmup_steps),
        max_seq_length=cfg.get("eval_max_seq_length"),
        tokenizer_name_or_path=str(tokenizer),
    )
    module.tokenizer = dm.tokenizer  # the same tokenizer; saves loading it twice
    val_every = t.get("val_check_interval")
    stsb = read_stsb_dev(stsb_path, limit=t.get("limit_val_pairs"))
    sts_cb = StsDevCallback(
        StsbDevEvaluator(stsb, int(cfg.get("eval_batch_size", 64))), every_n_steps=val_every
    )
    ckpt_cb = ModelCheckpoint(
        dirpath=str(out_dir / "checkpoints"),
        filename="step{step}-stsb{val/stsb_spearman:.4f}",
        auto_insert_metric_name=False,
        monitor=METRIC,
        mode="max",
        save_top_k=1,
        save_last=True,
        every_n_train_steps=val_every,
        save_on_train_epoch_end=True,
    )
    loggers, use_wandb = _loggers(cfg, out_dir)
    log_dir = loggers[0].log_dir  # fixes the CSV version before ddp_spawn copies the logger
    try:
        trainer = pl.Trainer(
            accelerator=t.accelerator,
            devices=t.devices,
            num_nodes=int(t.get("num_nodes", 1)),
            strategy=t.strategy,
            precision=t.precision,
            max_steps=int(cfg.max_steps),
            max_epochs=cfg.get("max_epochs"),
            log_every_n_steps=int(t.log_every_n_steps),
            deterministic=t.get("deterministic", "warn"),
            fast_dev_run=t.get("fast_dev_run", False),
            gradient_clip_val=t.get("gradient_clip_val"),
            accumulate_grad_batches=int(t.get("accumulate_grad_batches", 1)),
            callbacks=[sts_cb, ckpt_cb],
            logger=loggers,
            default_root_dir=str(out_dir),
            enable_progress_bar=bool(t.get("enable_progress_bar", True)),
            enable_model_summary=False,
            num_sanity_val_steps=0,
        )
        trainer.fit(module, datamodule=dm, ckpt_path=cfg.get("resume"))
        result: dict[str, Any] = {
            "best_model": None,
            "best_val": math.nan,
            "steps": int(trainer.global_step),
            "best_checkpoint": ckpt_cb.best_model_path or None,
            "last_checkpoint": ckpt_cb.last_model_path or None,
            "log_dir": log_dir,
            "num_triplets": len(triplets),
        }
        if ckpt_cb.best_model_score is not None:
            result["best_val"] = float(ckpt_cb.best_model_score)
        if trainer.is_global_zero and not trainer.fast_dev_run:
            if ckpt_cb.best_model_path:
                state = torch.load(ckpt_cb.best_model_path, map_location="cpu", weights_only=False)
                module.load_state_dict(state["state_dict"])
            else:
                log.warning("no STS-B dev evaluation ran; exporting the final weights")
            result["best_model"] = str(
                save_sentence_transformer(
                    module, out_dir / BEST_MODEL, cfg.get("export_max_seq_length")
                )
            )
        log.info("SimCSE done: %s", result)
        return result
    finally:
        if use_wandb:
            import wandb

            wandb.finish()
