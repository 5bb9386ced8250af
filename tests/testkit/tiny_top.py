"""Tiny random backbones for the TOP seq2seq module, in the real on-disk formats.

- :func:`build_tiny_bart`: a ``BartForConditionalGeneration`` dir with a byte-level BPE
  tokenizer (``facebook/bart-base``'s kind).

(The tiny BERT the module warm-starts an ``EncoderDecoderModel`` from, as from MiniLM, is
``tiny_bert.build_tiny_bert(..., layers=1, max_positions=256)``.) Its output is garbage until
trained; a few hundred steps on a handful of trees teach it
to copy (see ``tests/top/test_top_module.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from paraamr.testing.tiny_models import _bart_tokenizer, _prepare_dir, _save

__all__ = ["build_tiny_bart"]


def build_tiny_bart(
    model_dir: str | os.PathLike, seed: int = 0, *, d_model: int = 32, max_len: int = 256
) -> Path:
    """A 1+1-layer ``BartForConditionalGeneration`` dir with a byte-level BPE tokenizer."""
    from transformers import BartConfig, BartForConditionalGeneration

    path = _prepare_dir(model_dir)
    tokenizer = _bart_tokenizer()
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=d_model,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=2 * d_model,
        decoder_ffn_dim=2 * d_model,
        max_position_embeddings=max_len + 2,
        dropout=0.0,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    _save(BartForConditionalGeneration(config), tokenizer, path)
    return path
