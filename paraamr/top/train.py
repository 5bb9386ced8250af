"""Train one TOP model (generator, auxiliary parser or target parser): the shared trainer
(:func:`paraamr.training.seq2seq_train.train_seq2seq`: finite-loss guard, best checkpoint by
``val/loss``, reuse only under the same settings) with what is TOP's own, the training labels
and the depth cap of constrained parsing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from paraamr.training.seq2seq_train import train_seq2seq

__all__ = ["train_top_model", "ROLES"]

ROLES = ("generator", "parser")


def train_top_model(
    cfg: DictConfig,
    role: str,
    train_pairs: Sequence[tuple[str, str]],
    val_pairs: Sequence[tuple[str, str]],
    labels: Sequence[str],
    work: str | Path,
    name: str | None = None,
    max_depth: int | None = None,
) -> dict[str, Any]:
    """Train (or reuse) one TOP model under ``work``; returns the trainer's record.

    ``max_depth`` (the deepest training tree) becomes the model's ``max_depth`` where the
    model config says ``max_depth: auto``; an explicit number there wins.
    """
    extra: dict[str, Any] = {"labels": list(labels)}
    if cfg.model.get("max_depth", None) == "auto":
        extra["max_depth"] = max_depth
    return train_seq2seq(cfg, role, train_pairs, val_pairs, work, name, **extra)
