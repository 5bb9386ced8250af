"""Causal-LM perplexity: the batched scorer against the model's own loss, the SmolLM2 cache, the
builder's lm=smollm2 choice and the perplexity cache."""

from __future__ import annotations

import json
import math

import pytest

from paraamr.errors import ConfigError
from paraamr.lms import CausalLMScorer
from paraamr.lms.cache import CachedScorer

SENTS = [
    "I am at your service.",
    "If my son came back and your father wasn't home, it'd be better if you didn't let him in.",
    "mat the on sat cat The.",
    "Not even my father dares.",
    "You people think of everything.",
]


def _own_loss_ppl(tok, model, text: str) -> float:
    """exp of the model's own mean loss with labels=input_ids (HF shifts the labels itself)."""
    import torch

    ids = tok(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        return math.exp(float(model(input_ids=ids, labels=ids).loss))


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from paraamr.testing.tiny_models import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "lm", init_std=0.3)


def test_batched_perplexity_equals_the_models_own_loss_tiny(tiny_lm):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    scorer = CausalLMScorer(str(tiny_lm), batch_size=2, device="cpu")  # mixed lengths, padding
    ours = scorer.perplexities(SENTS)
    tok = AutoTokenizer.from_pretrained(str(tiny_lm))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm)).eval()
    for s, v in zip(SENTS, ours, strict=True):
        assert v == pytest.approx(_own_loss_ppl(tok, model, tok.bos_token + s), rel=1e-4)
    assert len(set(ours)) == len(ours)


def test_token_budget_batches_score_like_the_models_own_loss(tiny_lm):
    """``max_tokens``: every forward pass stays within the budget (a single longer sentence
    alone), short sentences share passes, and perplexities are the model's own loss."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    scorer = CausalLMScorer(str(tiny_lm), batch_size=64, device="cpu", max_tokens=30)
    shapes = []
    real_forward = scorer.model.forward
    scorer.model.forward = lambda **kw: (
        shapes.append(tuple(kw["input_ids"].shape)) or real_forward(**kw)
    )
    sents = SENTS * 3
    ours = scorer.perplexities(sents)
    tok = AutoTokenizer.from_pretrained(str(tiny_lm))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm)).eval()
    for s, v in zip(sents, ours, strict=True):
        assert v == pytest.approx(_own_loss_ppl(tok, model, tok.bos_token + s), rel=1e-4)
    assert sum(n for n, _ in shapes) == len(sents)
    assert all(n * width <= 30 or n == 1 for n, width in shapes)
    assert max(n for n, _ in shapes) > 1 and len(shapes) < len(sents)
    with pytest.raises(ConfigError, match="max_tokens"):
        CausalLMScorer(str(tiny_lm), device="cpu", max_tokens=0)


def test_bf16_on_cpu_is_autocast_named_in_the_signature_and_close_to_fp32(tiny_lm):
    fp32 = CausalLMScorer(str(tiny_lm), device="cpu")
    bf16 = CausalLMScorer(str(tiny_lm), device="cpu", dtype="bf16")
    assert bf16.autocast and "bf16-autocast" in bf16.signature()
    assert "bf16" not in fp32.signature()
    a, b = fp32.perplexities(SENTS), bf16.perplexities(SENTS)
    assert a != b  # autocast ran
    assert all(abs(x - y) / x < 0.05 for x, y in zip(a, b, strict=True))
    assert next(bf16.model.parameters()).dtype.is_floating_point  # weights stay fp32
    assert str(next(bf16.model.parameters()).dtype) == "torch.float32"


def test_empty_sentence_gets_nan(tiny_lm):
    scorer = CausalLMScorer(str(tiny_lm), device="cpu")
    a, b = scorer.perplexities(["", "a b"])
    assert math.isnan(a) and math.isfinite(b)


class _Counting:
    def __init__(self):
        self.seen: list[str] = []

    def signature(self) -> str:
        return "ppl(counting)"

    def perplexities(self, xs, batch_size=None):
        self.seen += list(xs)
        return [float(len(x)) if x != "bad" else float("nan") for x in xs]


def test_cache_resumes_and_skips_a_truncated_line(tmp_path):
    inner = _Counting()
    first = CachedScorer(inner, tmp_path, chunk_size=2)
    assert first.perplexities(["aa", "b", "bad"])[:2] == [2.0, 1.0]
    with open(first.path, "a", encoding="utf-8") as fh:
        fh.write('{"s": "cut off')  # a crash mid-write
    again = CachedScorer(_Counting(), tmp_path)
    assert again.n_bad_lines == 1
    out = again.perplexities(["b", "ccc", "bad"])
    assert out[:2] == [1.0, 3.0] and math.isnan(out[2])
    assert again.scorer.seen == ["ccc"]  # only the missing sentence was scored
    header = json.loads(first.path.read_text().splitlines()[0])
    assert header == {"signature": "ppl(counting)"}


@pytest.mark.slow
def test_smollm2_perplexity_equals_the_models_own_loss():
    """The real offline LM (dequantized into the cache on first use, ~1-2 min once)."""
    from paraamr.lms import smollm2

    tok, model = smollm2.load()
    assert tok.bos_token == smollm2.BOS
    ours = smollm2.perplexities(SENTS, batch_size=3)
    for s, v in zip(SENTS, ours, strict=True):
        assert v == pytest.approx(_own_loss_ppl(tok, model, smollm2.BOS + s), rel=1e-3)
    # a real LM: a scrambled sentence is far less likely than fluent ones
    assert ours[2] > 10 * max(ours[0], ours[3], ours[4])


@pytest.mark.slow
def test_builder_lm_smollm2_choice_scores_like_the_lms_scorer(compose_config):
    from hydra.utils import instantiate

    from paraamr.lms import smollm2

    cfg = compose_config("build", "lm=smollm2", "input=x.txt")
    scorer = instantiate(cfg.lm)
    assert scorer.signature().startswith(f"ppl({smollm2.label()},after=<im_start>,")
    ours = smollm2.perplexities(SENTS)
    assert scorer.perplexities(SENTS) == pytest.approx(ours, rel=1e-3)


def test_signature_survives_a_builder_signature(tiny_lm):
    """GPT-2's BOS is ``<|endoftext|>``: its '|' used to split the builder's signature."""
    from paraamr.errors import InputError
    from paraamr.signature import Signature

    sig = CausalLMScorer(str(tiny_lm), device="cpu").signature()
    assert "after=<endoftext>" in sig
    assert Signature.build(("lm", sig), ("config", "x")).fields == {"lm": sig, "config": "x"}
    with pytest.raises(InputError, match="cannot hold '|'"):
        Signature.build(("lm", "ppl(after=<|endoftext|>)"))


def test_unknown_dtype_names_the_key(tiny_lm):
    from paraamr.errors import ConfigError

    with pytest.raises(ConfigError, match="lm.dtype"):
        CausalLMScorer(str(tiny_lm), device="cpu", dtype="int4")
