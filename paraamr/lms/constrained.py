"""Per-row decoding constraints as one Hugging Face ``LogitsProcessor``.

A *constraint* has ``allowed(generated_ids) -> ...``, replayed from the tokens a row has
generated so far (so greedy search, sampling and beam search all work), returning

- a list of ids,
- :data:`FREE`: the processor's vocabulary mask ``free``,
- ``(FREE, id)`` / ``(FREE, [ids])``: that mask plus these ids, or
- ``(mask, [ids])``: a boolean vocabulary mask of the constraint's own plus these ids.

Used by the TOP parser and generator (:mod:`paraamr.top.constraints`) and by template-forced
SCPN decoding (:mod:`paraamr.scpn.forced`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ConstrainedLogits", "FREE"]

FREE = "free"  # a state in which any token of the processor's ``free`` mask may follow


class ConstrainedLogits:
    """A ``LogitsProcessor``: row ``b`` of the batch follows ``constraints[b // beams]``.

    Every token a row's constraint does not allow gets ``-inf``. Where another processor has
    already banned every allowed token (a repeated-word block on the only bracket the template
    allows), the constraint wins: its allowed tokens get score 0 instead of all ``-inf``, so
    the row never falls out of its constraint.

    Args:
        constraints: one constraint (or ``None``: unconstrained) per input.
        start: the first generated column (a decoder-only model: the prompt length).
        free: the vocabulary mask that :data:`FREE` stands for (``None`` where unused).
    """

    def __init__(self, constraints: Sequence[Any], start: int, free: Any = None) -> None:
        self.constraints, self.start, self.free = list(constraints), start, free

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        rows = input_ids.shape[0]
        beams = max(1, rows // max(1, len(self.constraints)))
        allow = torch.zeros_like(scores, dtype=torch.bool)
        vocab = scores.shape[1]
        for b in range(rows):
            c = self.constraints[b // beams]
            if c is None:
                allow[b] = True
                continue
            a = c.allowed(input_ids[b, self.start :].tolist())
            mask, ids = None, a
            if isinstance(a, str):  # FREE
                mask, ids = self.free, []
            elif isinstance(a, tuple):
                mask = self.free if isinstance(a[0], str) else a[0]
                ids = [a[1]] if isinstance(a[1], int) else a[1]
            if mask is not None:
                n = min(vocab, mask.numel())
                allow[b, :n] = mask[:n].to(scores.device)
            allow[b, [t for t in ids if t < vocab]] = True
        out = scores.masked_fill(~allow, float("-inf"))
        stuck = torch.isinf(out).all(dim=1)  # every allowed token banned by another processor
        if stuck.any():
            out[stuck] = torch.where(allow[stuck], 0.0, float("-inf")).to(out.dtype)
        return out
