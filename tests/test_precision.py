"""The one precision rule (paraamr.precision) and the models that follow it.

The expected rows are written out by hand from the rule in the module's docstring, for a CPU
with and without native bf16 and a GPU with bf16; the hardware checks are replaced so every
row runs on any machine.
"""

from __future__ import annotations

import logging

import pytest

from paraamr import precision as P
from paraamr.errors import ConfigError

# setting, device, native bf16 -> name, autocast, weights, Trainer precision, has a note
RULE = [
    ("auto", "cpu", False, "fp32", False, "fp32", "32-true", False),
    ("auto", "cpu", True, "bf16", True, "fp32", "bf16-mixed", False),
    ("auto", "cuda", True, "bf16", False, "bf16", "bf16-mixed", False),
    ("auto", "cuda", False, "fp32", False, "fp32", "32-true", False),
    (None, "cpu", True, "fp32", False, "fp32", "32-true", False),
    ("32", "cuda", True, "fp32", False, "fp32", "32", False),
    ("fp32", "cpu", True, "fp32", False, "fp32", "32-true", False),
    ("bf16", "cpu", False, "bf16", True, "fp32", "bf16-mixed", True),  # emulated: warned
    ("bf16-mixed", "cpu", True, "bf16", True, "fp32", "bf16-mixed", False),
    ("bf16-true", "cuda:1", True, "bf16", False, "bf16", "bf16-true", False),
    ("bf16-true", "cpu", True, "bf16", True, "fp32", "bf16-mixed", True),  # weights stay fp32
    ("bf16", "gpu", True, "bf16", False, "bf16", "bf16-mixed", False),
    ("fp16", "cpu", True, "fp32", False, "fp32", "32-true", True),
    ("16-mixed", "cpu", False, "fp32", False, "fp32", "32-true", True),
    ("fp16", "cuda", True, "fp16", False, "fp16", "16-mixed", False),
    ("16-mixed", "cuda", False, "fp16", False, "fp16", "16-mixed", False),
]


@pytest.fixture
def hardware(monkeypatch):
    """Set whether the CPU and the GPU run bf16 natively."""

    def set_native(native: bool) -> None:
        import torch

        why = "the CPU has AMX" if native else "AVX2 only"
        monkeypatch.setattr(P, "cpu_bf16_support", lambda: (native, why))
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: native)

    return set_native


@pytest.mark.parametrize("setting,device,native,name,autocast,weights,lightning,note", RULE)
def test_the_rule(hardware, setting, device, native, name, autocast, weights, lightning, note):
    hardware(native)
    p = P.resolve(setting, device)
    assert (p.name, p.autocast, p.weights, p.lightning) == (name, autocast, weights, lightning)
    assert (p.note is not None) == note


# inference (decoding): bf16 on a CPU casts the weights; every other row as in RULE
INFERENCE = [
    ("auto", "cpu", True, "bf16", False, "bf16", "bf16", False),
    ("auto", "cpu", False, "fp32", False, "fp32", "fp32", False),
    ("bf16", "cpu", False, "bf16", False, "bf16", "bf16", True),  # emulated: warned
    ("bf16-true", "cpu", True, "bf16", False, "bf16", "bf16", False),  # as asked: no note
    ("auto", "cuda", True, "bf16", False, "bf16", "bf16", False),
    ("fp16", "cpu", True, "fp32", False, "fp32", "fp32", True),
]


@pytest.mark.parametrize("setting,device,native,name,autocast,weights,label,note", INFERENCE)
def test_the_rule_for_inference(hardware, setting, device, native, name, autocast, weights,
                                label, note):  # fmt: skip
    import torch

    hardware(native)
    p = P.resolve(setting, device, inference=True)
    assert (p.name, p.autocast, p.weights, p.label) == (name, autocast, weights, label)
    assert (p.note is not None) == note
    a = torch.randn(4, 4)
    with p.context():  # never autocast: the weights carry the precision
        assert (a @ a).dtype == torch.float32


def test_unknown_setting_names_the_key():
    with pytest.raises(ConfigError, match=r"^lm\.dtype: 'half' is not one of auto, fp32"):
        P.resolve("half", "cpu", "lm.dtype")


def test_context_runs_bf16_matmuls_on_a_cpu_only_when_autocast(hardware):
    import torch

    hardware(False)
    a = torch.randn(4, 4)
    with P.resolve("bf16", "cpu").context():
        assert (a @ a).dtype == torch.bfloat16
    with P.resolve("auto", "cpu").context():
        assert (a @ a).dtype == torch.float32


def test_every_model_follows_the_one_rule(hardware, monkeypatch):
    """The Trainer, the similarity encoder and the perplexity LM resolve a setting the same way."""
    from paraamr.metrics import semantic
    from paraamr.training.recipe import resolve_precision

    for native in (False, True):
        hardware(native)
        for setting in ("auto", "bf16", "fp32"):
            want = P.resolve(setting, "cpu")
            assert semantic.resolve_precision(setting, "cpu") == want.name
            lightning = {"auto": "auto", "bf16": "bf16-mixed", "fp32": "32-true"}[setting]
            assert resolve_precision(lightning, "cpu")[0] == want.lightning
    hardware(True)
    assert resolve_precision("bf16-mixed", "auto") == ("bf16-mixed", None)  # a GPU is "here"
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert resolve_precision("16-mixed", "auto") == ("32-true", "16-mixed runs fp32 on a CPU")


def test_lm_and_builder_generator_run_bf16_as_autocast_on_a_cpu(tmp_path, hardware, caplog):
    """bf16 on a CPU: fp32 weights, autocast, named in the signature; fp16 there runs fp32 and
    says so in the log (it used to be dropped silently)."""
    import torch

    from paraamr.builder.models import HFGenerator
    from paraamr.lms.causal import CausalLMScorer
    from paraamr.testing.tiny_models import build_tiny_causal_lm, build_tiny_seq2seq

    hardware(False)
    lm_dir = build_tiny_causal_lm(tmp_path / "lm")
    with caplog.at_level(logging.WARNING):
        lm = CausalLMScorer(str(lm_dir), device="cpu", dtype="fp16")
    assert lm.dtype == "fp32" and not lm.autocast and "fp16 runs fp32" in caplog.text
    bf16 = CausalLMScorer(str(lm_dir), device="cpu", dtype="bf16")
    assert bf16.autocast and next(bf16.model.parameters()).dtype == torch.float32
    assert "bf16-autocast" in bf16.signature()

    gen = HFGenerator(str(build_tiny_seq2seq(tmp_path / "s2s")), max_new_tokens=4,
                      device="cpu", dtype="bf16")  # fmt: skip
    assert gen.precision.autocast and next(gen.model.parameters()).dtype == torch.float32
    assert gen.signature().endswith(",bf16-autocast)")  # a resumed build cannot mix the two
    fp32 = HFGenerator(str(tmp_path / "s2s"), max_new_tokens=4, device="cpu")
    assert fp32.signature() == f"hf-seq2seq({tmp_path / 's2s'})"
    seen = []
    layer = next(m for m in gen.model.modules() if isinstance(m, torch.nn.Linear))
    layer.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    gen.generate(["(b / boy)"])
    assert seen and set(seen) == {torch.bfloat16}
