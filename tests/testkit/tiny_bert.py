"""A tiny, randomly initialised BERT encoder in the real on-disk format (tests and demos).

``BertForSequenceClassification``-loadable directory: ``config.json``, ``model.safetensors`` and
a WordPiece ``vocab.txt`` (lower-cased words of :data:`paraamr.testing.tiny_models.TINY_CORPUS`
and of ``extra_words``, plus every single letter, so any text tokenizes). Two layers (one for
the TOP module's warm start), hidden size 32; builds in well under a second. The one tiny BERT
of the tests: SimCSE, SCPN, few-shot, the optimiser, and TOP's encoder-decoder. **Random
weights: check plumbing and learning on toy tasks, never quality.**
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterable
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

__all__ = ["build_tiny_bert"]

_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_bert(
    model_dir: str | os.PathLike,
    seed: int = 0,
    extra_words: Iterable[str] = (),
    *,
    layers: int = 2,
    max_positions: int = 128,
) -> Path:
    """Write a tiny BERT (``BertModel`` weights + ``BertTokenizerFast``) to ``model_dir``.

    Args:
        model_dir: the directory (created; files overwritten).
        seed: ``torch.manual_seed`` before the weights are drawn.
        extra_words: texts whose words join the vocabulary (e.g. a toy task's sentences).
        layers: encoder layers.
        max_positions: the longest input in tokens.

    Returns:
        The absolute path of the directory.

    >>> import tempfile
    >>> from transformers import AutoTokenizer
    >>> p = build_tiny_bert(tempfile.mkdtemp(), extra_words=["How far is Chicago"])
    >>> AutoTokenizer.from_pretrained(p).tokenize("How FAR Chicagoan")
    ['how', 'far', 'chicago', '##a', '##n']
    """
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from paraamr.testing.tiny_models import TINY_CORPUS

    path = Path(model_dir).resolve()
    path.mkdir(parents=True, exist_ok=True)
    words: set[str] = set()
    for text in [*TINY_CORPUS, *extra_words]:
        words.update(re.findall(r"[a-z0-9]+|[^\sa-z0-9]", text.lower()))
    pieces = sorted(words | set(string.ascii_lowercase) | set(string.digits))
    pieces += [f"##{c}" for c in string.ascii_lowercase + string.digits]
    (path / "vocab.txt").write_text("\n".join(_SPECIALS + pieces) + "\n", encoding="utf-8")
    vocab = {w: i for i, w in enumerate(_SPECIALS + pieces)}
    wp = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    wp.decoder = decoders.WordPiece()
    tok = BertTokenizerFast(
        tokenizer_object=wp,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=True,
    )
    tok.model_max_length = max_positions
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path
