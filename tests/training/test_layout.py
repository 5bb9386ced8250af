"""The one prompt / answer batch layout against a plain restatement of its rules: the list-based
layout TOP's module wrote before (rows built by concatenation, then turned into tensors)."""

from __future__ import annotations

import random

import pytest
import torch

from paraamr.training.layout import IGNORE, pad_rows, prompt_answer_batch


def _lists_layout(prompts, answers, pad):
    width = max(len(p) + len(a) for p, a in zip(prompts, answers, strict=True))
    ids, mask, labels = [], [], []
    for p, a in zip(prompts, answers, strict=True):
        n = width - len(p) - len(a)
        ids.append(p + a + [pad] * n)
        mask.append([1] * (len(p) + len(a)) + [0] * n)
        labels.append([-100] * len(p) + a + [-100] * n)
    return ids, mask, labels


def _rows(rng, n, lo, hi):
    return [[rng.randint(1, 999) for _ in range(rng.randint(lo, hi))] for _ in range(n)]


@pytest.mark.parametrize("seed", range(10))
def test_training_batches_equal_the_list_layout(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 9)
    prompts, answers = _rows(rng, n, 1, 12), _rows(rng, n, 0, 12)
    b = prompt_answer_batch(prompts, answers, pad=0)
    ids, mask, labels = _lists_layout(prompts, answers, 0)
    assert b["input_ids"].tolist() == ids and b["attention_mask"].tolist() == mask
    assert b["labels"].tolist() == labels and IGNORE == -100
    assert all(t.dtype == torch.long for t in b.values())


@pytest.mark.parametrize("left", [False, True])
def test_padding_keeps_each_row_on_its_side(left):
    rows = _rows(random.Random(3), 6, 0, 9)
    ids, mask = pad_rows(rows, pad=7, left=left)
    width = max(map(len, rows))
    for r, i, m in zip(rows, ids.tolist(), mask.tolist(), strict=True):
        fill = [7] * (width - len(r))
        assert i == (fill + r if left else r + fill)
        assert m == ([0] * len(fill) + [1] * len(r) if left else [1] * len(r) + [0] * len(fill))


def test_the_modules_lay_batches_out_the_same_way(tiny_gpt2):
    """TOP's decoder-only module writes prompt + newline + answer + eos through the layout."""
    from paraamr.training.seq2seq import Seq2SeqModule

    m = Seq2SeqModule(tiny_gpt2, arch="causal", max_source_length=16, max_target_length=16)
    sources, targets = ["a b c", "d"], ["x y", "z w v u"]
    b = m.encode_batch(sources, targets)
    sep = m.tokenizer("\n", add_special_tokens=False)["input_ids"]
    prompts = [m.units(s)[:16] + sep for s in sources]
    answers = [m.units(t)[:16] + [m.tokenizer.eos_token_id] for t in targets]
    ids, mask, labels = _lists_layout(prompts, answers, m.tokenizer.pad_token_id)
    assert b["input_ids"].tolist() == ids and b["labels"].tolist() == labels
    assert b["attention_mask"].tolist() == mask
    gen = m.encode_batch(sources)
    assert gen["input_ids"][:, -1].tolist() == [sep[-1]] * 2  # left-padded: prompts end together
