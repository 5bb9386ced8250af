"""Callbacks every trainer shares: evaluation every N steps feeding checkpoint selection, a
guard that stops on a non-finite loss before anything of that step is saved, and the progress
bar of the long runs."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import pytorch_lightning as pl
import torch

from paraamr.errors import ConfigError, TrainingError

__all__ = ["PeriodicEval", "FiniteLossGuard", "progress_bar"]


log = logging.getLogger(__name__)

DEFAULT_HINT = (
    "lower the learning rate (or raise warmup_steps), check the training data for empty or "
    "garbage inputs, or use precision 32"
)


class FiniteLossGuard(pl.Callback):
    """Raise :class:`~paraamr.errors.TrainingError` (a ``RuntimeError``) when the training loss
    is NaN or infinite, before the backward pass (so before the optimizer step and before any
    checkpoint of that step is written).

    The message names the step and learning rate, and adds the module's ``nonfinite_hint``
    (a string attribute) when it has one.
    """

    def on_before_backward(self, trainer: pl.Trainer, pl_module: pl.LightningModule, loss) -> None:
        value = float(loss.detach().float().item())
        if math.isfinite(value):
            return
        try:
            lr = float(trainer.optimizers[0].param_groups[0]["lr"])
        except (IndexError, KeyError, AttributeError, TypeError):
            lr = float("nan")
        hint = getattr(pl_module, "nonfinite_hint", "") or DEFAULT_HINT
        raise TrainingError(
            f"{type(pl_module).__name__}: loss is {value} at step {trainer.global_step} "
            f"(lr {lr:.3g}): {hint}; stopped before any checkpoint of this step was written"
        )


class PeriodicEval(pl.Callback):
    """Evaluate ``evaluate_fn(module)`` every ``every_n_steps`` optimizer steps (or, when
    ``None``, at each training-epoch end, including an epoch cut short by ``max_steps``), send it
    to the trainer's loggers as ``metric`` and put it in ``trainer.callback_metrics`` for
    :class:`~pytorch_lightning.callbacks.ModelCheckpoint` to monitor.

    The module is put in eval mode and gradients are off during the call. Every DDP process runs
    the evaluation on the same (synchronised) weights, so all log the same value.

    Args:
        evaluate_fn: ``callable(encoder) -> float``, the encoder having ``encode(sentences,
            batch_size=...)`` (e.g. :class:`paraamr.simcse.module.StsbDevEvaluator`); must be
            picklable for ``ddp_spawn``.
        every_n_steps: evaluation interval in optimizer steps; ``None``: epoch ends only.
        metric: the logged name.
    """

    def __init__(
        self,
        evaluate_fn: Callable[[Any], float],
        every_n_steps: int | None = None,
        metric: str = "val/stsb_spearman",
    ) -> None:
        if every_n_steps is not None and every_n_steps < 1:
            raise ConfigError(f"every_n_steps must be >= 1 or None, got {every_n_steps}")
        self.evaluate_fn = evaluate_fn
        self.every_n_steps = every_n_steps
        self.metric = metric
        self.history: list[tuple[int, float]] = []
        self._last_step = -1

    def _run(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        step = trainer.global_step
        if step == self._last_step or trainer.sanity_checking:
            return
        self._last_step = step
        was_training = pl_module.training
        pl_module.eval()
        try:
            with torch.no_grad():
                value = float(self.evaluate_fn(pl_module))
        finally:
            pl_module.train(was_training)
        self.history.append((step, value))
        log.info("step %d: %s = %.4f", step, self.metric, value)
        # Not ``pl_module.log``: a value logged from a batch hook is re-sent to the loggers at
        # every later logging step until overwritten. ModelCheckpoint reads callback_metrics.
        trainer.callback_metrics[self.metric] = torch.tensor(value)
        log_step = getattr(trainer.fit_loop.epoch_loop, "_batches_that_stepped", step)
        for logger in trainer.loggers:
            logger.log_metrics({self.metric: value}, step=log_step)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        n = self.every_n_steps
        if n is not None and trainer.global_step > 0 and trainer.global_step % n == 0:
            self._run(trainer, pl_module)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        if self.every_n_steps is None:
            self._run(trainer, pl_module)


def progress_bar(enabled: bool = True, refresh_rate: int = 1) -> pl.Callback | None:
    """Lightning's TQDM progress bar (batches, rate and ETA, also in a job's log file, where a
    Rich bar, Lightning's choice when ``rich`` is installed, shows nothing until it ends), or
    ``None`` when the trainer shows none (``trainer.enable_progress_bar=false``).

    >>> type(progress_bar()).__name__, progress_bar(enabled=False)
    ('TQDMProgressBar', None)
    """
    if not enabled:
        return None
    from pytorch_lightning.callbacks import TQDMProgressBar

    return TQDMProgressBar(refresh_rate=refresh_rate)
