"""Fit any LightningModule + DataModule from a composed Hydra config.

The config has the groups of ``conf/``: ``trainer`` (a ``pytorch_lightning.Trainer``),
``callbacks`` and ``logger`` (dicts of objects with ``_target_``; ``null`` entries and factories
returning ``None`` are dropped), plus ``seed``, ``out_dir`` and ``resume`` (a checkpoint path).
A new trainer is a module, a data module and configs; this function does the rest:

0. (the caller) :func:`seed_run` before building the module and data, so weight
   initialisation is seeded too;
1. instantiate callbacks, loggers and the trainer (``default_root_dir=out_dir``); the
   precision setting resolved by the one rule (``auto``: bf16 where the device runs it
   natively, else fp32; an explicit bf16 on a CPU without it is kept, with a warning:
   :func:`paraamr.training.recipe.resolve_precision`), and torch uses every core this
   process may use;
2. fit, resuming from ``resume`` (exactly: the data modules of :mod:`paraamr.training.data`
   continue with the next unseen batch);
3. always close the W&B run (a multirun must not reuse a dead run).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from paraamr.errors import ConfigError

__all__ = [
    "FitResult",
    "fit",
    "instantiate_group",
    "instantiate_loggers",
    "restore_best",
    "seed_run",
    "write_curves",
]

log = logging.getLogger(__name__)


@dataclass
class FitResult:
    """What :func:`fit` returns: the trainer and the named callbacks and loggers it used."""

    trainer: Any
    callbacks: dict[str, Any] = field(default_factory=dict)
    loggers: list[Any] = field(default_factory=list)

    @property
    def checkpoint(self) -> Any:
        """The ``checkpoint`` callback (a ``ModelCheckpoint``), if configured."""
        return self.callbacks.get("checkpoint")


def instantiate_group(node: DictConfig | None, group: str, **kwargs: Any) -> dict[str, Any]:
    """Instantiate each entry of a ``callbacks``/``logger`` group; ``None`` results dropped."""
    from hydra.utils import instantiate

    out: dict[str, Any] = {}
    for key, sub in (node or {}).items():
        if sub is None:
            continue
        if not isinstance(sub, DictConfig) or "_target_" not in sub:
            raise ConfigError(f"{group}.{key} needs a _target_ (got {sub!r})")
        obj = instantiate(sub, **kwargs.get(key, {}))
        if obj is not None:
            out[key] = obj
    return out


def seed_run(seed: int) -> None:
    """Seed Python, NumPy and torch (data-loader workers too); deterministic cuBLAS kernels."""
    import pytorch_lightning as pl

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    pl.seed_everything(int(seed), workers=True)


def instantiate_loggers(cfg: DictConfig) -> list[Any]:
    """The ``logger`` group's loggers; W&B gets the resolved run config (made a plain dict by
    :func:`paraamr.training.loggers.wandb_logger`: wandb cannot serialise an OmegaConf node)."""
    config = OmegaConf.to_container(cfg, resolve=True)
    wandb_kwargs = {"run_config": config, "_recursive_": False}  # wandb_logger makes it a dict
    return list(instantiate_group(cfg.get("logger"), "logger", wandb=wandb_kwargs).values())


def fit(cfg: DictConfig, module: Any, datamodule: Any, **trainer_kwargs: Any) -> FitResult:
    """Fit ``module`` on ``datamodule`` with the trainer, callbacks and loggers of ``cfg``."""
    from hydra.utils import instantiate

    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    callbacks = instantiate_group(cfg.get("callbacks"), "callbacks")
    loggers = instantiate_loggers(cfg)
    for lg in loggers:  # fixes the CSV version before ddp_spawn copies the logger
        getattr(lg, "log_dir", None)
    uses_wandb = any(type(lg).__name__ == "WandbLogger" for lg in loggers)
    from paraamr.training.recipe import resolve_precision, training_threads

    setting = cfg.trainer.get("precision")
    precision, note = resolve_precision(setting, cfg.trainer.get("accelerator"))
    if note:
        log.warning("trainer.precision=%s: %s", setting, note)
    elif str(setting) != precision:
        log.info("trainer.precision=%s runs %s", setting, precision)
    trainer_kwargs.setdefault("precision", precision)
    training_threads(cfg.get("threads"))
    try:
        trainer = instantiate(
            cfg.trainer,
            callbacks=list(callbacks.values()),
            logger=loggers or False,
            default_root_dir=str(out_dir),
            **trainer_kwargs,
        )
        trainer.fit(module, datamodule=datamodule, ckpt_path=cfg.get("resume"))
        if trainer.is_global_zero:
            write_curves(out_dir)
        return FitResult(trainer, callbacks, loggers)
    finally:
        if uses_wandb:
            import wandb

            wandb.finish()


def write_curves(out_dir: Path) -> list[Path]:
    """``<out_dir>/curves.{png,pdf}`` from the run's CSV log (nothing when there is none)."""
    from paraamr.training.curves import latest_metrics_csv, plot_curves

    path = latest_metrics_csv(out_dir)
    if path is None:
        return []
    return plot_curves({out_dir.name: path}, out_dir / "curves", signature=f"log:{path}",
                       title=str(out_dir))  # fmt: skip


def restore_best(module: Any, checkpoint_callback: Any) -> bool:
    """Load the best checkpoint's weights into ``module``; ``False`` when there is none."""
    import torch

    path = getattr(checkpoint_callback, "best_model_path", None)
    if not path:
        return False
    state = torch.load(path, map_location="cpu", weights_only=False)
    module.load_state_dict(state["state_dict"])
    return True
