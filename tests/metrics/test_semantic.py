"""Similarity with the real offline MiniLM model on real pairs, against a direct computation."""

from pathlib import Path

import numpy as np
import pytest

from paraamr.corpus import read_corpus
from paraamr.metrics.semantic import cosine_pairs, embed_unique, resolve_model


def test_cosine_pairs_equal_direct_sentence_transformers(minilm, parabank_eval):
    from sentence_transformers import util

    pairs = []
    for r in list(read_corpus(parabank_eval, "parabank-eval-parabank1"))[:15]:
        pairs += [(r.text, p.text) for p in r.paraphrases[:2]]
    ours = cosine_pairs(pairs, minilm, batch_size=7)
    for (a, b), v in zip(pairs, ours, strict=True):
        ea, eb = (
            minilm.encode([a], convert_to_tensor=True),
            minilm.encode([b], convert_to_tensor=True),
        )
        assert v == pytest.approx(float(util.cos_sim(ea, eb)), abs=1e-5)
    assert ours.mean() > 0.6  # real paraphrases are close


def test_each_distinct_sentence_is_embedded_once():
    calls = []

    class Counting:
        def encode(self, xs, **kw):
            calls.append(list(xs))
            return np.eye(len(xs), dtype=np.float32)

    embed_unique(["a", "b", "a", "a"], Counting())
    assert calls == [["a", "b"]]


def test_paper_model_name_resolves_to_the_hub(monkeypatch):
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # the tests run offline
        monkeypatch.delenv(var, raising=False)
    assert resolve_model("simcse") == "princeton-nlp/sup-simcse-bert-base-uncased"
    assert resolve_model("some/other-model") == "some/other-model"


@pytest.mark.parametrize("var", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_a_name_that_is_no_folder_or_cached_model_fails_at_once(monkeypatch, tmp_path, var):
    """Every loader's name goes through resolve_model / resolve_lm: encoders, backbones, LMs."""
    import paraamr.metrics.semantic as semantic
    from paraamr.errors import DataNotFoundError
    from paraamr.lms import resolve_lm
    from paraamr.lms.loading import resolve_backbone

    for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, "1")
    monkeypatch.setattr(semantic, "_hub_cached", lambda repo_id: False)
    for resolve in (resolve_model, resolve_backbone, lambda n: resolve_lm(n)[0]):
        with pytest.raises(DataNotFoundError, match=f"model nosuchmodel: not a known model name "
                           f".*not a local folder.*the hub is offline \\({var}=1\\)"):  # fmt: skip
            resolve("nosuchmodel")
        assert resolve(str(tmp_path)) == str(tmp_path)  # a local folder loads offline
    with pytest.raises(DataNotFoundError, match="model simcse is the hub's princeton-nlp/"):
        resolve_model("simcse")
    assert Path(resolve_model("minilm")).is_dir()  # the packaged model
    monkeypatch.setattr(semantic, "_hub_cached", lambda repo_id: repo_id == "some/cached")
    assert resolve_model("some/cached") == "some/cached"  # the hub's cache serves it offline
    monkeypatch.setenv(var, "0")
    assert resolve_model("nosuchmodel") == "nosuchmodel"  # online: the hub decides


def test_pooler_output_encoder_on_a_local_bert(tmp_path):
    """The SimCSE preset's encoder path, on a tiny BERT saved in Hugging Face format."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

    from paraamr.metrics.semantic import PoolerOutputEncoder, resolve_model

    tok = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=tok.vocab_size,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
        )
    ).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    enc = PoolerOutputEncoder(str(tmp_path))
    emb = enc.encode(["a cat sat .", "dogs bark"], batch_size=1, normalize_embeddings=True)
    ref = AutoModel.from_pretrained(str(tmp_path)).eval()
    with torch.no_grad():
        p = ref(**tok(["a cat sat ."], return_tensors="pt")).pooler_output[0]
    assert emb.shape == (2, 32)
    assert np.allclose(emb[0], (p / p.norm()).numpy(), atol=1e-5)


def test_bf16_autocast_encoder_agrees_with_fp32_and_really_runs_in_bf16(minilm, parabank_eval):
    """``similarity.precision=bf16``: the cosines of real pairs rank as fp32's do (Spearman
    ≥ 0.999, within 0.02), come back as float32, and differ from fp32 in the low digits (so
    autocast ran: a no-op wrapper would give identical numbers)."""
    from scipy.stats import spearmanr

    from paraamr.metrics.semantic import AutocastEncoder

    pairs = []
    for r in list(read_corpus(parabank_eval, "parabank-eval-parabank1"))[:40]:
        pairs += [(r.text, p.text) for p in r.paraphrases[:2]]
    fp32 = cosine_pairs(pairs, minilm)
    bf16_encoder = AutocastEncoder(minilm, "cpu")
    bf16 = cosine_pairs(pairs, bf16_encoder)
    assert bf16.dtype == np.float32 or bf16.dtype == np.float64
    assert spearmanr(fp32, bf16).statistic >= 0.999
    assert np.abs(fp32 - bf16).max() < 0.02
    assert np.abs(fp32 - bf16).max() > 1e-6
    assert bf16_encoder.max_seq_length == minilm.max_seq_length


def test_auto_precision_follows_the_hardware(monkeypatch):
    from paraamr import precision
    from paraamr.metrics.semantic import resolve_precision

    monkeypatch.setattr(precision, "cpu_bf16_support", lambda: (False, "AVX2 only"))
    assert resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(precision, "cpu_bf16_support", lambda: (True, "the CPU has AMX"))
    assert resolve_precision("auto", "cpu") == "bf16"
    assert resolve_precision("fp32", "cpu") == "fp32"


def test_autocast_encoder_copies_without_recursion():
    """``copy`` builds the wrapper without ``__init__``: looking up ``model`` must not recurse."""
    import copy

    from paraamr.metrics.semantic import AutocastEncoder

    class Enc:
        max_seq_length = 7

    assert copy.copy(AutocastEncoder(Enc(), "cpu")).max_seq_length == 7


def test_bf16_embeddings_depend_on_the_batch_fp32_ones_do_not(minilm):
    """Why Table 2's default stays fp32: a sentence's bf16 embedding changes with the padding
    its batch gets (so sharded and unsharded runs would differ), its fp32 embedding does not."""
    from paraamr.metrics.semantic import AutocastEncoder

    short = ["The cat sat on the mat.", "A dog ran."]
    long = ["A considerably longer sentence that pads the whole batch to many more tokens, so "
            "every shape of the computation changes."]  # fmt: skip
    for enc, lo, hi in ((minilm, 0.0, 1e-5), (AutocastEncoder(minilm, "cpu"), 1e-5, 0.02)):
        alone = enc.encode(short, normalize_embeddings=True)
        padded = enc.encode(short + long, normalize_embeddings=True)[:2]
        assert lo <= np.abs(alone - padded).max() <= hi


def test_bf16_encoder_wraps_the_cached_fp32_model():
    from paraamr.metrics.semantic import AutocastEncoder, load_encoder

    fp32 = load_encoder("minilm", "cpu")
    bf16 = load_encoder("minilm", "cpu", "bf16")
    assert bf16.model is fp32 and isinstance(bf16, AutocastEncoder)
    assert not isinstance(fp32, AutocastEncoder)
