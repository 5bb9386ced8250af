"""The one prompt / answer batch layout of the conditional LMs (SCPN, TOP, the AMR models).

- :func:`pad_rows`: token-id rows -> ``(input_ids, attention_mask)``, padded on the right (a
  training batch, an encoder's input) or on the left (a decoder-only model's generation
  prompts, so every row ends where generation starts).
- :func:`prompt_answer_batch`: a decoder-only training batch, ``prompt + answer`` per row,
  right-padded, ``labels`` equal to the answer's ids and :data:`IGNORE` on the prompt and the
  padding (the loss is on the answer only).

Examples:
    >>> b = prompt_answer_batch([[5, 6], [7]], [[1, 2], [3, 4, 9]], pad=0)
    >>> b["input_ids"].tolist(), b["attention_mask"].tolist()
    ([[5, 6, 1, 2], [7, 3, 4, 9]], [[1, 1, 1, 1], [1, 1, 1, 1]])
    >>> b["labels"].tolist()
    [[-100, -100, 1, 2], [-100, 3, 4, 9]]
    >>> ids, mask = pad_rows([[1, 2, 3], [4]], pad=0, left=True)
    >>> ids.tolist(), mask.tolist()
    ([[1, 2, 3], [0, 0, 4]], [[1, 1, 1], [0, 0, 1]])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["IGNORE", "pad_rows", "prompt_answer_batch"]

#: the label id the loss skips (``torch.nn.CrossEntropyLoss``'s ``ignore_index``)
IGNORE = -100


def pad_rows(
    rows: Sequence[Sequence[int]], pad: int, left: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, attention_mask)`` of ``rows`` padded with ``pad`` to the longest row."""
    n = max(len(r) for r in rows)
    ids = torch.full((len(rows), n), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), n), dtype=torch.long)
    for i, r in enumerate(rows):
        sl = slice(n - len(r), n) if left else slice(0, len(r))
        ids[i, sl] = torch.tensor(list(r), dtype=torch.long)
        mask[i, sl] = 1
    return ids, mask


def prompt_answer_batch(
    prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]], pad: int
) -> dict[str, torch.Tensor]:
    """A decoder-only training batch: ``prompt + answer`` per row, right-padded, ``labels`` on
    the answer only (see the module)."""
    rows = [list(p) + list(a) for p, a in zip(prompts, answers, strict=True)]
    ids, mask = pad_rows(rows, pad)
    labels = torch.full_like(ids, IGNORE)
    for i, (p, a) in enumerate(zip(prompts, answers, strict=True)):
        labels[i, len(p) : len(p) + len(a)] = torch.tensor(list(a), dtype=torch.long)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
