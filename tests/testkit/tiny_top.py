"""Tiny random backbones for the TOP seq2seq module, in the real on-disk formats.

- :func:`build_tiny_bert`: a ``BertModel`` dir with an uncased WordPiece tokenizer (the
  offline MiniLM's kind), trained in milliseconds on the given text: the module warm-starts
  an ``EncoderDecoderModel`` from it exactly as from MiniLM.
- :func:`build_tiny_bart`: a ``BartForConditionalGeneration`` dir with a byte-level BPE
  tokenizer (``facebook/bart-base``'s kind).

Their output is garbage until trained; a few hundred steps on a handful of trees teach them
to copy (see ``tests/top/test_top_module.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import torch

from paraamr.testing.tiny_models import TINY_CORPUS, _bart_tokenizer, _prepare_dir, _save

__all__ = ["build_tiny_bert", "build_tiny_bart"]


def _wordpiece_tokenizer(texts: Iterable[str], vocab_size: int = 400):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import BertTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials)
    tok.train_from_iterator(list(texts), trainer=trainer)
    return BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        do_lower_case=True,
    )


def build_tiny_bert(
    model_dir: str | os.PathLike, texts: Iterable[str] = (), seed: int = 0, *, hidden: int = 32
) -> Path:
    """A 1-layer uncased-WordPiece ``BertModel`` dir (vocabulary from ``TINY_CORPUS`` + ``texts``).

    >>> import tempfile
    >>> from transformers import AutoTokenizer
    >>> p = build_tiny_bert(tempfile.mkdtemp(), ["How far is Chicago"])
    >>> AutoTokenizer.from_pretrained(p).tokenize("How FAR")
    ['how', 'far']
    """
    from transformers import BertConfig, BertModel

    path = _prepare_dir(model_dir)
    tokenizer = _wordpiece_tokenizer([*TINY_CORPUS, *texts])
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    _save(BertModel(config), tokenizer, path)
    return path


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
