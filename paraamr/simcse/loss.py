"""Supervised SimCSE's contrastive loss (Gao et al., 2021) as a pure function on plain tensors.

For a batch of ``B`` anchors ``z1``, their positives ``z2`` and optional negatives ``z3``, the
logits are the cosine similarities of each anchor with every candidate ``[z2; z3]`` divided by the
temperature (shape ``B x B`` or ``B x 2B``); the target of anchor ``i`` is candidate ``i`` (its own
positive). Every other positive and every negative in the batch is a negative for anchor ``i``.

``hard_negative_weight`` is SimCSE's ``hard_negative_weight``: a log-space bonus added to the
logit of each anchor's *own* negative (``z3[i]`` for anchor ``i``) after the temperature scaling,
exactly like the ``weights`` matrix of SimCSE's ``cl_forward``. ``0`` (SimCSE's default) leaves
the logits unchanged.

>>> import torch
>>> z = torch.eye(3)
>>> round(simcse_loss(z, z, temperature=1.0).item(), 4)   # log(1 + 2 e^-1) - 0
0.5514
>>> SimCSELoss(temperature=1.0)(z, z).item() == simcse_loss(z, z, temperature=1.0).item()
True
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from paraamr.errors import ConfigError, InputError

__all__ = ["simcse_logits", "simcse_loss", "SimCSELoss"]

log = logging.getLogger(__name__)


def simcse_logits(
    z1: Tensor,
    z2: Tensor,
    z3: Tensor | None = None,
    temperature: float = 0.05,
    hard_negative_weight: float = 0.0,
) -> Tensor:
    """The ``B x B`` (or ``B x 2B`` with negatives) logit matrix of :func:`simcse_loss`.

    Computed in float32 whatever the input dtype (a 1/0.05 scale overflows half precision easily).

    Args:
        z1: anchor embeddings, ``(B, D)``.
        z2: positive embeddings, ``(B, D)``.
        z3: negative embeddings, ``(B, D)``, or ``None`` for in-batch negatives only.
        temperature: softmax temperature, > 0.
        hard_negative_weight: bonus added to ``logits[i, B + i]`` (ignored without ``z3``).

    Raises:
        ValueError: on a non-positive temperature or mismatched shapes.
    """
    if not temperature > 0:
        raise ConfigError(f"temperature must be > 0, got {temperature}")
    if z1.ndim != 2 or z1.shape != z2.shape or (z3 is not None and z3.shape != z1.shape):
        shapes = [tuple(z.shape) for z in (z1, z2, z3) if z is not None]
        raise InputError(f"z1, z2 (and z3) must all be (B, D) of the same shape, got {shapes}")
    candidates = z2 if z3 is None else torch.cat([z2, z3], dim=0)
    with torch.autocast(device_type=z1.device.type, enabled=False):  # keep float32 under AMP
        a = F.normalize(z1.float(), dim=-1)
        c = F.normalize(candidates.float(), dim=-1)
        logits = a @ c.T / temperature
    if z3 is not None and hard_negative_weight:
        b = z1.shape[0]
        bonus = torch.zeros_like(logits)
        idx = torch.arange(b, device=logits.device)
        bonus[idx, b + idx] = float(hard_negative_weight)
        logits = logits + bonus
    return logits


def simcse_loss(
    z1: Tensor,
    z2: Tensor,
    z3: Tensor | None = None,
    temperature: float = 0.05,
    hard_negative_weight: float = 0.0,
) -> Tensor:
    """Mean cross-entropy of :func:`simcse_logits` with target ``i`` for anchor ``i``.

    Args:
        z1: anchor embeddings, ``(B, D)``.
        z2: positive embeddings, ``(B, D)``.
        z3: negative embeddings, ``(B, D)``, or ``None``.
        temperature: softmax temperature (SimCSE: 0.05).
        hard_negative_weight: log-space bonus on each anchor's own negative (SimCSE: 0).

    Returns:
        A scalar float32 tensor.

    >>> import torch
    >>> z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> z3 = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    >>> round(simcse_loss(z1, z1, z3, temperature=1.0).item(), 4)
    1.0064
    """
    logits = simcse_logits(z1, z2, z3, temperature, hard_negative_weight)
    targets = torch.arange(logits.shape[0], device=logits.device)
    return F.cross_entropy(logits, targets)


class SimCSELoss(nn.Module):
    """:func:`simcse_loss` as a module (sentence-transformers style); no parameters.

    Args:
        temperature: softmax temperature.
        hard_negative_weight: log-space bonus on each anchor's own negative.
    """

    def __init__(self, temperature: float = 0.05, hard_negative_weight: float = 0.0) -> None:
        super().__init__()
        if not temperature > 0:
            raise ConfigError(f"temperature must be > 0, got {temperature}")
        self.temperature = float(temperature)
        self.hard_negative_weight = float(hard_negative_weight)

    def forward(self, z1: Tensor, z2: Tensor, z3: Tensor | None = None) -> Tensor:
        return simcse_loss(z1, z2, z3, self.temperature, self.hard_negative_weight)

    def extra_repr(self) -> str:
        return f"temperature={self.temperature}, hard_negative_weight={self.hard_negative_weight}"
