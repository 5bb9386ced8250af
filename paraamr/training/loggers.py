"""Experiment loggers built from the ``logger/`` config group: CSV always, W&B when enabled.

W&B runs offline unless ``WANDB_MODE`` (or ``mode``) says otherwise
(:func:`paraamr.tracking.wandb_mode`); ``enabled: false`` or ``WANDB_MODE=disabled`` turns it
off, and the factory then returns ``None`` (dropped by :func:`paraamr.training.fit.fit`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["wandb_logger"]


def wandb_logger(
    *,
    enabled: bool = True,
    project: str = "paraamr",
    group: str | None = None,
    name: str | None = None,
    save_dir: str = ".",
    mode: str | None = None,
    run_config: dict[str, Any] | None = None,
) -> Any:
    """A Lightning ``WandbLogger`` (or ``None`` when disabled)."""
    from paraamr.tracking import wandb_mode

    mode = wandb_mode(mode)
    if not enabled or mode == "disabled":
        return None
    from omegaconf import DictConfig, OmegaConf
    from pytorch_lightning.loggers import WandbLogger

    if isinstance(run_config, DictConfig):  # instantiate() hands dict arguments over as configs
        run_config = OmegaConf.to_container(run_config, resolve=True)

    return WandbLogger(
        project=project, group=group, name=name, save_dir=save_dir, mode=mode, config=run_config
    )
