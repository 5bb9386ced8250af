"""The one optimiser builder (paraamr.training.optim): schedules by hand, Hugging Face's
warm-up convention equal to transformers' own schedules at every step, and the trainers that
build through it (SimCSE: parameter groups, fused AdamW, HF warm-up; few-shot: constant)."""

from __future__ import annotations

import pytest
import torch

from paraamr.errors import ConfigError
from paraamr.training.optim import build_optimizer


def test_optimizer_schedules_by_hand():
    p = [torch.nn.Parameter(torch.zeros(2))]
    lin = build_optimizer(p, lr=0.1, warmup_steps=2, schedule="linear", total_steps=6)
    f = lin["lr_scheduler"]["scheduler"].lr_lambdas[0]
    assert [f(s) for s in range(7)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]
    const = build_optimizer(p, lr=0.1, optimizer="adamw", weight_decay=0.01)
    assert isinstance(const["optimizer"], torch.optim.AdamW)
    assert [const["lr_scheduler"]["scheduler"].lr_lambdas[0](s) for s in (0, 50)] == [1.0, 1.0]
    assert const["optimizer"].param_groups[0]["weight_decay"] == 0.01
    with pytest.raises(ConfigError, match="model.optimizer"):
        build_optimizer(p, lr=0.1, optimizer="sgd")
    with pytest.raises(ConfigError, match="model.schedule"):
        build_optimizer(p, lr=0.1, schedule="cosine")
    with pytest.raises(ConfigError, match="linear needs"):
        build_optimizer(p, lr=0.1, schedule="linear")


def _rates(built: dict, steps: int) -> list[float]:
    opt, sched = built["optimizer"], built["lr_scheduler"]["scheduler"]
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("warmup,total", [(0, 7), (3, 10), (4, 4), (5, 3)])
def test_hf_warmup_equals_transformers_schedules_at_every_step(warmup, total):
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    def params():
        return [torch.nn.Parameter(torch.zeros(2))]

    ours = build_optimizer(params(), lr=0.3, optimizer="adamw", warmup_steps=warmup,
                           schedule="linear", total_steps=total, warmup_start=0)  # fmt: skip
    opt = torch.optim.AdamW(params(), lr=0.3)
    hf = {
        "optimizer": opt,
        "lr_scheduler": {"scheduler": get_linear_schedule_with_warmup(opt, warmup, total)},
    }
    assert _rates(ours, total + 2) == _rates(hf, total + 2)
    ours = build_optimizer(params(), lr=0.3, warmup_steps=warmup, warmup_start=0)
    opt = torch.optim.Adam(params(), lr=0.3)
    hf = {
        "optimizer": opt,
        "lr_scheduler": {"scheduler": get_constant_schedule_with_warmup(opt, warmup)},
    }
    assert _rates(ours, total + 2) == _rates(hf, total + 2)
    with pytest.raises(ConfigError, match="warmup_start"):
        build_optimizer(params(), lr=0.3, warmup_start=2)


def test_parameter_groups_keep_their_weight_decay_and_fused_falls_back():
    decay, plain = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    groups = [{"params": [decay], "weight_decay": 0.1}, {"params": [plain], "weight_decay": 0.0}]
    opt = build_optimizer(groups, lr=0.5, optimizer="adamw", fused=True)["optimizer"]
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.0]
    half = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))  # no fused kernel on CPU
    opt = build_optimizer([half], lr=0.5, optimizer="adamw", fused=True)["optimizer"]
    assert isinstance(opt, torch.optim.AdamW)


def test_simcse_trains_with_hf_warmup_and_groups(monkeypatch):
    """SimCSE's optimiser: AdamW, no decay on biases and LayerNorms, the first step at rate 0
    (transformers' linear schedule), as its original code trains."""
    from types import SimpleNamespace

    from transformers import get_linear_schedule_with_warmup

    from paraamr.simcse.module import SimCSEModule

    m = SimCSEModule("minilm", lr=0.2, weight_decay=0.01, warmup_steps=3)
    monkeypatch.setattr(SimCSEModule, "trainer", SimpleNamespace(estimated_stepping_batches=8))
    built = m.configure_optimizers()
    opt = built["optimizer"]
    named = {id(p): n for n, p in m.named_parameters()}
    decay, plain = ([named[id(p)] for p in g["params"]] for g in opt.param_groups)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.01, 0.0]
    assert plain and all(n.endswith("bias") or "LayerNorm" in n for n in plain)
    assert decay and not any(n.endswith("bias") or "LayerNorm" in n for n in decay)
    trainable = {n for n, p in m.named_parameters() if p.requires_grad}
    assert set(decay) | set(plain) == trainable  # the frozen pooler is left out
    ref = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=0.2)
    hf = {
        "optimizer": ref,
        "lr_scheduler": {"scheduler": get_linear_schedule_with_warmup(ref, 3, 8)},
    }
    assert _rates(built, 10) == _rates(hf, 10)


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_fewshot_trains_at_a_constant_rate(tmp_path, optimizer):
    """The few-shot classifier: the paper's Adam (weight decay as L2) at one rate throughout."""
    from tiny_bert import build_tiny_bert

    from paraamr.fewshot.module import FewShotClassifier

    tiny_bert = build_tiny_bert(tmp_path / "bert")

    m = FewShotClassifier(str(tiny_bert), lr=0.01, weight_decay=1e-5, optimizer=optimizer)
    built = m.configure_optimizers()
    want = torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW
    assert type(built["optimizer"]) is want
    assert built["optimizer"].param_groups[0]["weight_decay"] == 1e-5
    assert set(_rates(built, 6)) == {0.01}
    with pytest.raises(ConfigError, match="model.optimizer"):
        FewShotClassifier(str(tiny_bert), optimizer="sgd")
