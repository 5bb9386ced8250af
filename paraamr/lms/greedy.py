"""Greedy decoding for a decoder-only model that drops finished rows from the batch.

``model.generate`` runs every row of a batch until the longest answer ends: a row that has
written its end token still goes through the whole model at each later step, its output thrown
away. On a CPU a decoding step costs a fixed part (reading the weights) plus a part per row, so
a batch whose answers differ in length pays for rows that are already done. :func:`greedy_compact`
gives the same tokens as ``model.generate(do_sample=False, num_beams=1)`` with the same logits
processors, but after each step the finished rows leave the model's batch and its key/value
cache (``Cache.batch_select_indices``). The processors still see the whole batch, every row at
its position, as they do inside ``model.generate`` (a finished row's scores are zeros and its
token is the pad), so per-row processors such as :class:`paraamr.lms.constrained.ConstrainedLogits`
keep their row order.

Measured in ``docs/amr.md`` (``make bench-decode``): parsing sentences with the AMR parser on a
2-core CPU, this and larger batches against ``model.generate`` in batches of 16.

>>> import torch, transformers
>>> cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32,
...     num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, pad_token_id=0,
...     eos_token_id=1, bos_token_id=1)
>>> _ = torch.manual_seed(0)
>>> model = transformers.LlamaForCausalLM(cfg).eval()
>>> ids = torch.tensor([[0, 5, 6, 7], [8, 9, 10, 11]])
>>> mask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
>>> ours = greedy_compact(model, ids, mask, max_new_tokens=6, eos_token_id=1, pad_token_id=0)
>>> hf = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=6, do_sample=False,
...                     eos_token_id=1, pad_token_id=0)
>>> torch.equal(ours, hf)
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = ["greedy_compact", "plain_generation_config", "HFSteps"]

# generation-config fields that add logits processors or stopping rules inside
# ``model.generate``: where one is set, greedy_compact would not reproduce it
_ADDS_PROCESSING = {
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "min_length": 0,
    "min_new_tokens": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "sequence_bias": None,
    "stop_strings": None,
    "max_time": None,
    "exponential_decay_length_penalty": None,
    "renormalize_logits": False,
    "guidance_scale": None,
}


def plain_generation_config(config: Any) -> bool:
    """True when ``config`` (a ``GenerationConfig``) adds no processor or stopping rule of its
    own to greedy search, so :func:`greedy_compact` reproduces ``model.generate``.

    >>> from transformers import GenerationConfig
    >>> plain_generation_config(GenerationConfig(eos_token_id=2))
    True
    >>> plain_generation_config(GenerationConfig(repetition_penalty=1.2))
    False
    """
    return all(getattr(config, k, v) in (v, None) for k, v in _ADDS_PROCESSING.items())


def _eos_ids(eos_token_id: int | Sequence[int] | None) -> list[int]:
    if eos_token_id is None:
        return []
    return [int(eos_token_id)] if isinstance(eos_token_id, int) else [int(e) for e in eos_token_id]


class HFSteps:
    """The decoding steps of a Hugging Face decoder-only model: the prompt's forward pass, then
    one token per row with the key/value cache, finished rows dropped from the cache
    (``Cache.batch_select_indices``)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name, self.last_only = _forward_names(model)
        self.cache: Any = None

    def first(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The last position's logits of each prompt (left-padded)."""
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=True, **self.last_only)  # fmt: skip
        self.cache = _cache_of(out)
        return out.logits[:, -1, :].float()

    def next(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        positions: torch.Tensor,
        keep: torch.Tensor | None,
    ) -> torch.Tensor:
        """The logits after one more token per row; ``keep``: the rows of the previous step
        that go on (``None``: all)."""
        if keep is not None:
            self.cache.batch_select_indices(keep)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=True, **self.last_only, **{self.name: self.cache})  # fmt: skip
        self.cache = _cache_of(out)
        return out.logits[:, -1, :].float()


def _forward_names(model: Any) -> tuple[str, dict[str, int]]:
    """The forward argument that takes the key/value cache (``cache`` in transformers 5.2x,
    ``past_key_values`` before) and the one that keeps the last position's logits only."""
    import inspect

    params = inspect.signature(model.forward).parameters
    cache = "cache" if "cache" in params else "past_key_values"
    keep = next((k for k in ("logits_to_keep", "num_logits_to_keep") if k in params), None)
    return cache, ({keep: 1} if keep else {})


def _cache_of(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


@torch.no_grad()
def greedy_compact(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    eos_token_id: int | Sequence[int] | None,
    pad_token_id: int,
    logits_processor: Sequence[Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = (),
) -> torch.Tensor:
    """Greedy answers of a decoder-only ``model`` to left-padded prompts, finished rows
    dropped from the model's batch after each step. ``model``: a Hugging Face model, or an
    engine's steps (``first`` / ``next`` as :class:`HFSteps`; the OpenVINO engine's
    :class:`paraamr.lms.engines.OpenVINOSteps`).

    Returns ``(batch, prompt + steps)`` ids like ``model.generate``: the prompts, then each
    row's tokens up to and including its end token, then ``pad_token_id`` up to the longest.
    """
    eos = torch.tensor(_eos_ids(eos_token_id), dtype=torch.long, device=input_ids.device)
    rows = input_ids.shape[0]
    seqs = input_ids
    mask = attention_mask.long()
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    active = torch.arange(rows, device=input_ids.device)  # batch rows still in the model
    steps = model if hasattr(model, "first") and hasattr(model, "next") else HFSteps(model)
    logits = steps.first(input_ids, mask, positions)
    last = positions[:, -1:]
    for n in range(max_new_tokens):
        scores = torch.zeros(rows, logits.shape[-1], dtype=logits.dtype, device=logits.device)
        scores[active] = logits
        for proc in logits_processor:
            scores = proc(seqs, scores)
        step = torch.full((rows,), pad_token_id, dtype=torch.long, device=seqs.device)
        step[active] = scores[active].argmax(dim=-1)
        seqs = torch.cat([seqs, step[:, None]], dim=-1)
        going = ~torch.isin(step[active], eos)
        if not bool(going.any()) or n == max_new_tokens - 1:
            break
        keep = None
        if not bool(going.all()):
            keep = going.nonzero().squeeze(-1)
            active, mask, last = active[keep], mask[keep], last[keep]
        mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=-1)
        last = last + 1
        logits = steps.next(seqs[active, -1:], mask, last, keep)
    return seqs
