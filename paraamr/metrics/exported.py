"""Sentence encoders run outside torch: the transformer of a sentence-transformers model exported
to ONNX once, then run by ONNX Runtime (``backend="onnx"``, fp32, or its dynamically quantised
int8 copy) or by OpenVINO (``backend="openvino"``, which compiles the same ONNX file).

sentence-transformers' own ``backend="onnx"/"openvino"`` goes through ``optimum-onnx`` /
``optimum-intel``, which pin other releases of transformers (4.57) or of torch and transformers
(2.14.1 CUDA, 5.5.4) than this project's, so the export here is torch's own
(``torch.onnx.export``) of the model's transformer, with mean pooling and normalisation done as
the sentence-transformers pipeline does them (only ``Transformer -> Pooling(mean) ->
[Normalize]`` pipelines, like all-MiniLM-L6-v2; any other raises). The exported file is cached
under ``$PARAAMR_CACHE`` (default ``.cache``) ``/onnx/<model>-<hash of its weights>/``.

Agreement with torch fp32 (tested): fp32 ONNX and OpenVINO embeddings within 1e-5; int8 is an
approximation whose agreement ``make bench-encoder`` reports (and whose numbers depend on the
batch, as with bf16: activations are quantised per batch).

Examples:
    >>> mean_pool([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]], [[1, 1, 0]]).tolist()
    [[2.0, 3.0]]
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paraamr.datadir import cache_root
from paraamr.errors import ConfigError
from paraamr.utils import require

__all__ = ["BACKENDS", "ExportedEncoder", "export_onnx", "mean_pool"]

log = logging.getLogger(__name__)

BACKENDS = ("torch", "onnx", "openvino")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def mean_pool(hidden: Any, mask: Any) -> np.ndarray:
    """Mean of the token states where ``mask`` is 1 (sentence-transformers' mean pooling)."""
    h, m = np.asarray(hidden, dtype=np.float32), np.asarray(mask, dtype=np.float32)[..., None]
    return (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)


def _pipeline(model: Any) -> tuple[Any, bool]:
    """The Transformer module of a mean-pooling sentence-transformers model, and whether it
    normalises; anything else is refused."""
    try:
        kinds = [type(m).__name__ for m in model]
    except TypeError:  # not a sentence-transformers pipeline (SimCSE's pooler encoder)
        raise ConfigError(
            f"similarity.backend: {type(model).__name__} is not a sentence-transformers model: "
            "use similarity.backend=torch"
        ) from None
    ok = kinds[:2] == ["Transformer", "Pooling"] and kinds[2:] in ([], ["Normalize"])
    if ok:
        cfg = model[1].get_config_dict()
        legacy = "mean" if cfg.get("pooling_mode_mean_tokens") else ""
        ok = cfg.get("pooling_mode", legacy) == "mean"
    if not ok:
        raise ConfigError(
            f"similarity.backend: only Transformer -> Pooling(mean) -> [Normalize] models can be "
            f"exported here, this one is {' -> '.join(kinds)}: use similarity.backend=torch"
        )
    return model[0], kinds[2:] == ["Normalize"]


def _weights_hash(transformer: Any) -> str:
    h = hashlib.sha1()
    for name, t in sorted(transformer.auto_model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def export_onnx(model: Any, out_dir: str | os.PathLike) -> Path:
    """Write the transformer of a sentence-transformers ``model`` to ``out_dir/model.onnx``
    (inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` where the tokenizer has them;
    output the last hidden states; batch and length dynamic). Returns the file."""
    import torch

    transformer, _ = _pipeline(model)
    tok, bert = transformer.tokenizer, transformer.auto_model.eval()
    enc = tok(["a short one", "and a somewhat longer sentence here"], padding=True,
              return_tensors="pt")  # fmt: skip
    names = [k for k in _INPUTS if k in enc]

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, *args: Any) -> Any:
            return self.bert(**dict(zip(names, args, strict=True))).last_hidden_state

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.onnx"
    tmp = out / f"model.onnx.{os.getpid()}.partial"  # processes exporting at once each rename
    dyn = {k: {0: "batch", 1: "tokens"} for k in [*names, "last_hidden_state"]}
    with torch.no_grad():
        torch.onnx.export(Hidden(), tuple(enc[k] for k in names), str(tmp), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=dyn,
                          opset_version=17, dynamo=False)  # fmt: skip
    tmp.replace(path)
    return path


def _quantized(path: Path) -> Path:
    """The int8 copy of an ONNX file (ONNX Runtime's dynamic quantisation, int8 weights per
    channel: per-tensor scales measured worse, cosine to fp32 down to 0.90 on ParaBank-Eval)."""
    q = path.with_name("model.int8.onnx")
    if not q.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = q.with_name(f"model.int8.onnx.{os.getpid()}.partial")
        quantize_dynamic(str(path), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        tmp.replace(q)
    return q


class ExportedEncoder:
    """sentence-transformers' ``encode`` for a mean-pooling model run by ONNX Runtime or
    OpenVINO (see the module docstring).

    Args:
        model: a loaded ``SentenceTransformer`` (its tokenizer, length limit and weights).
        backend: ``onnx`` or ``openvino``.
        int8: ``onnx`` only: the dynamically quantised copy.
        threads: intra-op threads (``None``: every core this process may use).
        cache: the export folder's parent (``None``: ``$PARAAMR_CACHE/onnx`` or ``.cache/onnx``).

    ``variant``: ``onnx``, ``onnx-int8`` or ``openvino`` (what
    :func:`paraamr.metrics.semantic.encoder_variant` names for its settings).
    """

    def __init__(
        self,
        model: Any,
        backend: str = "onnx",
        int8: bool = False,
        threads: int | None = None,
        cache: str | os.PathLike | None = None,
    ) -> None:
        from paraamr.utils import available_cores

        if backend not in ("onnx", "openvino"):
            raise ConfigError(f"similarity.backend must be one of {BACKENDS}, got {backend!r}")
        if int8 and backend != "onnx":
            raise ConfigError("similarity.precision=int8 runs on similarity.backend=onnx only")
        transformer, self.normalize = _pipeline(model)
        self.tokenizer, self.max_length = transformer.tokenizer, model.max_seq_length
        root = Path(cache) if cache else cache_root() / "onnx"
        name = Path(str(getattr(transformer.auto_model, "name_or_path", "model"))).name or "model"
        folder = root / f"{name}-{_weights_hash(transformer)}"
        path = folder / "model.onnx"
        if not path.exists():
            require("onnx", f"similarity.backend={backend}")
            log.info("exporting %s to %s (once)", name, path)
            export_onnx(model, folder)
        threads = threads or available_cores()
        self.variant = "onnx-int8" if int8 else backend
        if backend == "onnx":
            ort = require("onnxruntime", "similarity.backend=onnx")
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            file = _quantized(path) if int8 else path
            sess = ort.InferenceSession(str(file), opts, providers=["CPUExecutionProvider"])
            self.inputs = [i.name for i in sess.get_inputs()]
            self._run = lambda feeds: sess.run(None, feeds)[0]
        else:
            ov = require("openvino", "similarity.backend=openvino")
            props = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"}
            compiled = ov.Core().compile_model(str(path), "CPU", props)
            self.inputs = [p.get_any_name() for p in compiled.inputs]
            self._run = lambda feeds: compiled(feeds)[0]

    def encode(
        self,
        sentences: Sequence[str],
        batch_size: int = 128,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        **_: Any,
    ) -> np.ndarray:
        """Embeddings of ``sentences`` in their order (batches of similar length, through
        :func:`paraamr.utils.map_length_batches`)."""
        from tqdm.auto import tqdm

        from paraamr.utils import map_length_batches

        sentences = list(sentences)
        bar = tqdm(total=len(sentences), disable=not show_progress_bar, desc="encode")

        def embed(batch: list[str]) -> np.ndarray:
            enc = self.tokenizer(batch, padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="np")  # fmt: skip
            feeds = {k: enc[k].astype(np.int64) for k in self.inputs}
            bar.update(len(batch))
            return mean_pool(self._run(feeds), enc["attention_mask"])

        rows = map_length_batches(sentences, embed, batch_size, longest_first=True)
        bar.close()
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        out = np.stack(rows).astype(np.float32)
        if self.normalize or normalize_embeddings:
            norm = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.where(norm > 0, norm, 1.0)
        return out
