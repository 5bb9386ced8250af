"""The one optimiser builder of every trainer: SCPN, TOP and the AMR models (through
:class:`paraamr.training.condgen.CondGenModule`), SimCSE and the few-shot classifiers.

Adam (the papers: Adam, no weight decay) or AdamW, over parameters or parameter groups, with a
per-step ``LambdaLR``: linear warm-up to ``lr`` over ``warmup_steps``, then a ``constant`` rate
or a ``linear`` decay to 0 at ``total_steps``. Two warm-up conventions exist in the field and
both are kept, named by ``warmup_start``:

- ``1`` (the default; SCPN, TOP, AMR): step ``s`` of the warm-up runs at ``(s + 1) / warmup``
  of ``lr``, so the first step already learns;
- ``0`` (Hugging Face's ``get_linear_schedule_with_warmup`` /
  ``get_constant_schedule_with_warmup``, which SimCSE's original code trains with): ``s /
  warmup``, the first step at rate 0. Equal to those schedules at every step
  (``tests/training/test_optim.py``).

Examples:
    >>> import torch
    >>> p = [torch.nn.Parameter(torch.zeros(1))]
    >>> f = build_optimizer(p, lr=1.0, warmup_steps=4)["lr_scheduler"]["scheduler"].lr_lambdas[0]
    >>> [round(f(s), 2) for s in range(5)]
    [0.25, 0.5, 0.75, 1.0, 1.0]
    >>> f = build_optimizer(p, lr=1.0, warmup_steps=4, warmup_start=0)
    >>> [round(f["lr_scheduler"]["scheduler"].lr_lambdas[0](s), 2) for s in range(5)]
    [0.0, 0.25, 0.5, 0.75, 1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch

from paraamr.errors import ConfigError

__all__ = ["build_optimizer", "check_choice", "OPTIMIZERS", "SCHEDULES"]

OPTIMIZERS = ("adam", "adamw")
SCHEDULES = ("constant", "linear")


def check_choice(value: Any, choices: Sequence[Any], key: str) -> Any:
    """``value`` if it is one of ``choices``, else a :class:`ConfigError` naming ``key``.

    >>> check_choice("adam", OPTIMIZERS, "model.optimizer")
    'adam'
    """
    if value not in choices:
        raise ConfigError(f"{key} must be one of {tuple(choices)}, got {value!r}")
    return value


def build_optimizer(
    params: Iterable[Any],
    *,
    lr: float,
    optimizer: str = "adam",
    weight_decay: float = 0.0,
    warmup_steps: int = 0,
    schedule: str = "constant",
    total_steps: int | None = None,
    warmup_start: int = 1,
    fused: bool = False,
) -> dict[str, Any]:
    """Lightning's ``configure_optimizers`` answer: the optimiser over ``params`` (parameters,
    or parameter groups: dicts with their own ``weight_decay``) and its per-step scheduler.

    Args:
        warmup_start: ``1``: warm-up step ``s`` at ``(s + 1) / warmup_steps``; ``0``: at
            ``s / warmup_steps`` (Hugging Face's schedules).
        fused: try torch's fused Adam/AdamW kernel (~5x faster steps on CPU and GPU for
            SimCSE's full fine-tuning); the plain one where the device or dtype has none.

    Raises:
        ConfigError: an unknown optimizer or schedule, ``linear`` without ``total_steps``, or a
            ``warmup_start`` other than 0 or 1.
    """
    check_choice(optimizer, OPTIMIZERS, "model.optimizer")
    check_choice(schedule, SCHEDULES, "model.schedule")
    check_choice(warmup_start, (0, 1), "warmup_start")
    if schedule == "linear" and not total_steps:
        raise ConfigError("model.schedule=linear needs the trainer's step count (max_steps)")
    cls = torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW
    params = list(params)
    opt = None
    if fused:
        try:
            opt = cls(params, lr=lr, weight_decay=weight_decay, fused=True)
        except (RuntimeError, TypeError, ValueError):  # device or dtype without a fused kernel
            opt = None
    if opt is None:
        opt = cls(params, lr=lr, weight_decay=weight_decay)
    warm = max(0, int(warmup_steps))
    total = int(total_steps) if schedule == "linear" else None

    def factor(step: int) -> float:
        if warm and step < warm:
            return (step + warmup_start) / warm
        if total is None:
            return 1.0
        return max(0.0, (total - step) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
