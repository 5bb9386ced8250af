"""Sentence encoders exported to ONNX (paraamr.metrics.exported) against sentence-transformers
in torch fp32 on real ParaBank-Eval sentences."""

from __future__ import annotations

import numpy as np
import pytest

from paraamr.errors import ConfigError
from paraamr.metrics.exported import ExportedEncoder
from paraamr.metrics.semantic import encoder_label, load_encoder

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def sentences(parabank_eval):
    import csv

    with open(parabank_eval / "candidates.tsv", encoding="utf-8", newline="") as f:
        rows = [r["candidate"] for r in csv.DictReader(f, delimiter="\t")]
    return list(dict.fromkeys(rows))[:60]


@pytest.fixture(scope="module")
def fp32(minilm):
    return minilm


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


def test_onnx_and_openvino_agree_with_torch_fp32(fp32, sentences, cache):
    want = fp32.encode(sentences, batch_size=16)  # sentence-transformers in torch
    onnx = ExportedEncoder(fp32, "onnx", cache=cache)
    assert onnx.variant == "onnx" and encoder_label("minilm", onnx.variant) == "minilm,onnx"
    assert np.abs(onnx.encode(sentences, batch_size=16) - want).max() < 1e-5
    pytest.importorskip("openvino")
    ov = ExportedEncoder(fp32, "openvino", cache=cache)
    assert np.abs(ov.encode(sentences, batch_size=16) - want).max() < 1e-4


def test_order_batches_and_the_export_cache(fp32, sentences, cache):
    enc = ExportedEncoder(fp32, "onnx", cache=cache)
    files = list(cache.rglob("model.onnx"))
    assert len(files) == 1
    stamp = files[0].stat().st_mtime_ns
    whole = enc.encode(sentences, batch_size=64)
    perm = np.random.default_rng(0).permutation(len(sentences))
    shuffled = enc.encode([sentences[i] for i in perm], batch_size=7)
    assert np.abs(shuffled - whole[perm]).max() < 1e-5
    ExportedEncoder(fp32, "onnx", cache=cache)  # exported once
    assert files[0].stat().st_mtime_ns == stamp and len(list(cache.rglob("model.onnx"))) == 1


def test_int8_is_close_to_fp32(fp32, sentences, cache):
    want = fp32.encode(sentences)
    q = ExportedEncoder(fp32, "onnx", int8=True, cache=cache)
    assert q.variant == "onnx-int8"
    got = q.encode(sentences)
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() > 0.97 and np.abs(got - want).max() > 1e-5  # quantised, not the same


def test_refused_settings_name_the_key(fp32):
    assert not isinstance(load_encoder("minilm", "cpu", "bf16", "onnx"), ExportedEncoder)
    with pytest.raises(ConfigError, match="not a sentence-transformers model"):
        ExportedEncoder(object(), "onnx")
    with pytest.raises(ConfigError, match="int8 needs similarity.backend=onnx"):
        load_encoder("minilm", "cpu", "int8")
    with pytest.raises(ConfigError, match="similarity.backend must be one of"):
        load_encoder("minilm", "cpu", "fp32", "tensorrt")
    with pytest.raises(ConfigError, match="int8 runs on similarity.backend=onnx only"):
        ExportedEncoder(fp32, "openvino", int8=True)

    class Cls:  # a CLS-pooling pipeline cannot be run as mean pooling
        def __iter__(self):
            return iter([type("Transformer", (), {})(), type("Dense", (), {})()])

    with pytest.raises(ConfigError, match="Transformer -> Dense"):
        ExportedEncoder(Cls(), "onnx")


# by hand, on a CPU without CUDA: bf16 is torch autocast whatever the backend asks
CPU_VARIANTS = {("fp32", "torch"): "fp32", ("bf16", "torch"): "bf16", ("fp32", "onnx"): "onnx",
                ("bf16", "onnx"): "bf16", ("int8", "onnx"): "onnx-int8",
                ("fp32", "openvino"): "openvino", ("bf16", "openvino"): "bf16"}  # fmt: skip


@pytest.mark.parametrize("precision", ["fp32", "bf16", "int8"])
@pytest.mark.parametrize("backend", ["torch", "onnx", "openvino"])
def test_signature_variant_names_what_load_encoder_runs(backend, precision):
    """The signature is built from the settings (encoder_variant), the encoder from
    load_encoder: for every setting they agree on what runs (or both refuse it)."""
    from sentence_transformers import SentenceTransformer

    from paraamr.metrics.semantic import AutocastEncoder, encoder_variant, similarity_label

    settings = {"name": "minilm", "device": "cpu", "precision": precision, "backend": backend}
    try:
        variant = encoder_variant("cpu", precision, backend)
    except ConfigError:
        with pytest.raises(ConfigError):
            load_encoder("minilm", "cpu", precision, backend)
        assert (precision, backend) in {("int8", "torch"), ("int8", "openvino")}
        return
    if backend == "openvino":
        pytest.importorskip("openvino")
    enc = load_encoder("minilm", "cpu", precision, backend)
    kind = {ExportedEncoder: enc.variant if isinstance(enc, ExportedEncoder) else None,
            AutocastEncoder: "bf16", SentenceTransformer: "fp32"}[type(enc)]  # fmt: skip
    assert kind == variant == CPU_VARIANTS[precision, backend]
    assert similarity_label(settings) == ("minilm" if kind == "fp32" else f"minilm,{kind}")
