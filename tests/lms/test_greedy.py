"""Greedy decoding that drops finished rows (paraamr.lms.greedy) against Hugging Face's own
``model.generate``: the same ids, with and without a per-row logits processor, on a Llama and a
GPT-2 with left-padded prompts of different lengths; and which calls of
``CondGenModule.generate_ids`` take it."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
import transformers

from paraamr.lms.constrained import ConstrainedLogits
from paraamr.lms.greedy import greedy_compact, plain_generation_config


def _llama(seed: int = 0):
    cfg = transformers.LlamaConfig(vocab_size=48, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=128)  # fmt: skip
    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(cfg).eval()


def _gpt2(seed: int = 0):
    cfg = transformers.GPT2Config(vocab_size=48, n_embd=32, n_layer=2, n_head=4, n_positions=128)
    torch.manual_seed(seed)
    return transformers.GPT2LMHeadModel(cfg).eval()


def _prompts(rows: int = 9, seed: int = 1):
    """Left-padded random prompts of 2..7 tokens (pad id 0)."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 8, (rows,), generator=g)
    width = int(lengths.max())
    ids = torch.zeros(rows, width, dtype=torch.long)
    mask = torch.zeros(rows, width, dtype=torch.long)
    for r, n in enumerate(lengths.tolist()):
        ids[r, width - n :] = torch.randint(3, 48, (n,), generator=g)
        mask[r, width - n :] = 1
    return ids, mask


def _hf(model, ids, mask, steps, eos, processors=None):
    kw = {"logits_processor": transformers.LogitsProcessorList(processors)} if processors else {}
    return model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=steps,
                          do_sample=False, num_beams=1, eos_token_id=eos, pad_token_id=0,
                          **kw)  # fmt: skip


def _common_token(model, ids, mask, steps) -> int:
    """The token the model writes most often: as the end token, rows end at different steps."""
    out = _hf(model, ids, mask, steps, eos=None)[:, ids.shape[1] :]
    return Counter(out.flatten().tolist()).most_common(1)[0][0]


def _end_steps(out: torch.Tensor, start: int, eos: int) -> list[int]:
    """Per row, the step at which it wrote the end token (None: never)."""
    ends = []
    for row in out[:, start:].tolist():
        ends.append(row.index(eos) if eos in row else None)
    return ends


@pytest.mark.parametrize("build", [_llama, _gpt2], ids=["llama", "gpt2"])
def test_same_ids_as_model_generate_with_rows_ending_at_different_steps(build):
    model = build()
    ids, mask = _prompts()
    steps = 14
    eos = _common_token(model, ids, mask, steps)
    hf = _hf(model, ids, mask, steps, eos)
    ours = greedy_compact(model, ids, mask, steps, eos, pad_token_id=0)
    ends = _end_steps(hf, ids.shape[1], eos)
    # the case the compaction exists for: some rows end early, others go on
    assert len({e for e in ends}) >= 3, ends
    assert torch.equal(ours, hf)


class _RowRule:
    """Row r may write only tokens whose id is r mod 3 (an allowed list per row, as
    ConstrainedLogits's constraints give), until it has written 5, then only the end token."""

    def __init__(self, row: int, eos: int, length: int) -> None:
        self.row, self.eos, self.length = row, eos, length

    def allowed(self, generated: list[int]) -> list[int]:
        real = [t for t in generated if t != 0]
        if len(real) >= self.length or self.eos in real:
            return [self.eos]
        return [t for t in range(3, 48) if t % 3 == self.row % 3] + [self.eos]


def test_same_ids_as_model_generate_with_a_per_row_constraint():
    model = _llama(seed=3)
    ids, mask = _prompts(rows=7, seed=4)
    start = ids.shape[1]
    rules = [_RowRule(r, eos=2, length=3 + r) for r in range(7)]  # rows end at 3..9 tokens
    proc = [ConstrainedLogits(rules, start)]
    hf = _hf(model, ids, mask, 12, eos=2, processors=proc)
    ours = greedy_compact(model, ids, mask, 12, 2, 0, proc)
    assert torch.equal(ours, hf)
    # every row kept to its own rule: the constraint saw each row at its own index
    for r, row in enumerate(ours[:, start:].tolist()):
        body = row[: row.index(2)]
        assert len(body) <= 3 + r and all(t % 3 == r % 3 for t in body), (r, row)


def test_no_end_token_runs_to_the_limit():
    model = _llama()
    ids, mask = _prompts(rows=4)
    ours = greedy_compact(model, ids, mask, 5, None, 0)
    assert ours.shape == (4, ids.shape[1] + 5)
    assert torch.equal(ours, _hf(model, ids, mask, 5, eos=None))


def test_plain_generation_config():
    G = transformers.GenerationConfig
    assert plain_generation_config(G(eos_token_id=2, pad_token_id=2))
    assert not plain_generation_config(G(no_repeat_ngram_size=3))
    assert not plain_generation_config(G(bad_words_ids=[[5]]))


def test_generate_ids_takes_the_compact_path_for_greedy_only(tiny_gpt2, monkeypatch):
    """Greedy decoder-only calls go through greedy_compact (counted); beam search, sampling
    and a generation config with its own processors go through model.generate."""
    import paraamr.lms.greedy as greedy
    from paraamr.amrlm.module import AMRModule

    module = AMRModule(model_name_or_path=tiny_gpt2, direction="generate", constrained=False,
                       max_source_length=16, max_target_length=6)  # fmt: skip
    calls = []
    real = greedy.greedy_compact

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(greedy, "greedy_compact", counted)
    prompts = ["( want-01 :ARG0 boy )", "( go-02 )"]
    greedy_out = module.generate(prompts)
    assert len(calls) == 1
    module.generate(prompts, num_beams=2)
    assert len(calls) == 1
    module.model.generation_config.repetition_penalty = 1.3
    module.generate(prompts)
    assert len(calls) == 1
    module.model.generation_config.repetition_penalty = 1.0
    # and the compact path answers as model.generate does
    monkeypatch.setattr(type(module), "_compact_greedy", lambda self, kw: False)
    assert module.generate(prompts) == greedy_out
