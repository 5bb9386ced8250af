"""Constrained decoding for TOP (paraamr.top.constraints) and the decoder-only TOP module.

The constraints are checked against the tree decoder, not against themselves: every gold tree
of the TOPv2 weather 25-SPIS split is a path the parser constraint allows, and any path the
constraints allow (random walks, an untrained model greedy / sampled / in beams) decodes to a
tree with exactly the utterance's words, or exactly the template's structure.
"""

from __future__ import annotations

import random

import pytest
import torch

from paraamr.errors import ConfigError
from paraamr.top.constraints import FREE, ConstrainedLogits, LabelIds, ParserConstraint
from paraamr.top.encoding import LabelVocab, decode, encode
from paraamr.top.readers import read_examples
from paraamr.top.templates import template, template_string
from paraamr.top.trees import Node, depth, to_string, utterance

WEATHER_25 = "topv2/low_resource_splits/weather_train_25spis.tsv"


@pytest.fixture(scope="module")
def weather(data_dir):
    return [e.tree for e in read_examples(data_dir / WEATHER_25)]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from paraamr.testing.tiny_models import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def module(tiny_lm, weather):
    from paraamr.top.module import TopModule

    vocab = LabelVocab.from_trees(weather)
    return TopModule(
        str(tiny_lm), labels=vocab.labels, add_label_tokens=True, constrained=True,
        warmup_steps=0, max_target_length=120,
    )  # fmt: skip


def _resolve(allowed, free: torch.Tensor) -> set[int]:
    if isinstance(allowed, tuple):
        return {*torch.nonzero(free).flatten().tolist(), allowed[1]}
    if allowed == FREE:
        return set(torch.nonzero(free).flatten().tolist())
    return set(allowed)


def _walk(constraint, free, rng: random.Random, limit: int = 400) -> list[int]:
    """A random path through the constraint until eos (eos not included)."""
    out: list[int] = []
    eos = constraint.ids.eos
    for _ in range(limit):
        a = constraint.allowed(out)
        if isinstance(a, tuple):  # free tokens or the forced label: end a span half the time
            t = a[1] if rng.random() < 0.5 else rng.choice(_free_ids(free))
        elif a == FREE:
            t = rng.choice(_free_ids(free))
        else:
            t = rng.choice(a)
        if t == eos:
            return out
        out.append(t)
    raise AssertionError("no eos within the limit")


_FREE_CACHE: dict[int, list[int]] = {}


def _free_ids(free: torch.Tensor) -> list[int]:
    key = id(free)
    if key not in _FREE_CACHE:
        _FREE_CACHE[key] = torch.nonzero(free).flatten().tolist()
    return _FREE_CACHE[key]


def _decode(module, ids: list[int]) -> Node:
    from paraamr.training.seq2seq import decode_ids

    return decode(
        decode_ids(module.tokenizer, ids), LabelVocab.from_labels(module.settings["labels"])
    )


def test_every_gold_weather_tree_is_an_allowed_parse(module, weather):
    eos = module.tokenizer.eos_token_id
    for tree in weather:
        gold = module.units(encode(tree)) + [eos]
        c = module.constraint(utterance(tree))
        for k, tok in enumerate(gold):
            allowed = _resolve(c.allowed(gold[:k]), module.label_ids().free)
            assert tok in allowed, (to_string(tree), k)
        # and the path is forced to end there
        assert c.allowed(gold[:-1]) == [eos]


def test_parser_paths_keep_the_utterance_words_and_the_label_grammar(module, weather):
    rng = random.Random(0)
    ids = module.label_ids()
    for tree in weather[:60]:
        u = utterance(tree)
        path = _walk(module.constraint(u), ids.free, rng)
        got = _decode(module, path)
        assert utterance(got) == u
        # intents under the root or slots, slots under intents
        stack = [(got, True)]
        while stack:
            node, want_intent = stack.pop()
            assert node.is_intent == want_intent, to_string(got)
            stack += [(c, not node.is_intent) for c in node.children if isinstance(c, Node)]


def test_template_paths_keep_the_template(module, weather):
    rng = random.Random(1)
    ids = module.label_ids()
    for tree in weather[:60]:
        src = encode(template(tree))
        path = _walk(module.constraint(src), ids.free, rng)
        assert template_string(_decode(module, path)) == template_string(tree)


def test_parser_constraint_rules_by_hand():
    ids = LabelIds(
        opens={"[in:a": 10, "[sl:b": 11, "[in:c": 12},
        closes={"in:a]": 20, "sl:b]": 21, "in:c]": 22},
        mask=30,
        eos=0,
    )
    c = ParserConstraint([[5], [6]], ids)
    assert c.allowed([]) == [10, 12]  # the root: intents only
    assert c.allowed([10, 11]) == [5, 10, 12]  # inside a slot: a word or an intent
    assert c.allowed([10, 11, 5]) == [6, 10, 12, 21]  # the slot has a child: it may close
    assert c.allowed([10, 5, 6]) == [20]  # every word written: only the close
    assert c.allowed([10, 11, 5, 21, 6, 20]) == [0]
    assert ParserConstraint([[5]], ids, max_depth=1).allowed([10]) == [5]  # depth guard


def test_logits_rows_follow_their_own_constraint_across_beams():
    ids = LabelIds({"[in:a": 3}, {"in:a]": 4}, mask=5, eos=0)
    rules = [ParserConstraint([[1]], ids), ParserConstraint([[2]], ids)]
    proc = ConstrainedLogits(rules, start=1, free=torch.ones(6, dtype=torch.bool))
    prompt_then_open = torch.tensor([[9, 3]] * 4)  # 2 inputs x 2 beams, each wrote "[in:a"
    out = proc(prompt_then_open, torch.zeros(4, 6))
    allowed = [torch.isfinite(r).nonzero().flatten().tolist() for r in out]
    assert allowed == [[1], [1], [2], [2]]


def test_untrained_model_decodes_inside_its_input(module, weather):
    trees = [t for t in weather if len(utterance(t).split()) <= 4][:6]  # the tiny LM: 128 positions
    utts = [utterance(t) for t in trees]
    vocab = LabelVocab.from_labels(module.settings["labels"])
    for kw in ({}, {"num_beams": 2}, {"do_sample": True, "top_p": 0.9, "seed": 3}):
        outs = module.generate(utts, max_new_tokens=90, **kw)
        assert [utterance(decode(o, vocab)) for o in outs] == utts, kw
    few_masks = [t for t in weather if encode(template(t)).count("[mask]") <= 2][:6]
    tmpls = [encode(template(t)) for t in few_masks]  # spans end by MAX_SPAN tokens
    outs = module.generate(tmpls, do_sample=True, top_p=0.9, seed=1, max_new_tokens=90)
    want = [template_string(t) for t in few_masks]
    assert [template_string(decode(o, vocab)) for o in outs] == want
    assert module.training  # train mode restored


def test_max_depth_caps_the_nesting_of_sampled_parses(module, tiny_lm, weather):
    """An untrained parser samples nested labels; ``max_depth=1`` leaves only flat intents,
    with the utterance's words still all there."""
    from paraamr.top.module import TopModule

    flat = TopModule(
        str(tiny_lm), labels=module.settings["labels"], add_label_tokens=True,
        constrained=True, max_depth=1, max_target_length=120,
    )  # fmt: skip
    flat.model.load_state_dict(module.model.state_dict())
    utts = [utterance(t) for t in weather if len(utterance(t).split()) <= 4][:6]
    vocab = LabelVocab.from_labels(module.settings["labels"])

    def depths(m) -> list[int]:
        outs = []
        for seed in range(3):
            outs += m.generate(utts, do_sample=True, top_p=1.0, seed=seed, max_new_tokens=90)
        trees = [decode(o, vocab) for o in outs]
        assert [utterance(t) for t in trees] == utts * 3
        return [depth(t) for t in trees]

    assert max(depths(module)) > 1  # without the cap the untrained model nests
    assert set(depths(flat)) == {1}
    with pytest.raises(ConfigError, match="max_depth"):
        TopModule(str(tiny_lm), labels=["IN:A"], constrained=True, max_depth=0)


def test_causal_batch_prompt_masked_and_loss_equals_the_models(module, weather):
    tree = weather[0]
    batch = module.encode_batch([utterance(tree)], [encode(tree)])
    labels = batch["labels"][0].tolist()
    answer = module.units(encode(tree)) + [module.tokenizer.eos_token_id]
    n_prompt = len(module.units(utterance(tree))) + 1  # + the newline
    assert labels[:n_prompt] == [-100] * n_prompt
    assert labels[n_prompt:] == answer
    two = module.encode_batch([utterance(t) for t in weather[:3]], [encode(t) for t in weather[:3]])
    module.eval()
    with torch.no_grad():
        nll, n = module.answer_nll(two)
        own = module.model(**two).loss
    module.train()
    torch.testing.assert_close(nll / n, own)


def test_frozen_module_trains_only_the_top_block_and_added_rows(tiny_lm, weather, tmp_path):
    from paraamr.top.module import TopModule

    labels = LabelVocab.from_trees(weather).labels
    m = TopModule(
        str(tiny_lm), labels=labels, add_label_tokens=True, freeze_layers=1, warmup_steps=0
    )
    first_new = m.tokenizer.convert_tokens_to_ids(m.added_tokens[0])
    before = m.model.get_input_embeddings().weight.detach().clone()
    block0 = [p.detach().clone() for p in m.model.transformer.h[0].parameters()]
    opt = torch.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=1e-2)
    batch = m.encode_batch([utterance(t) for t in weather[:4]], [encode(t) for t in weather[:4]])
    nll, n = m.answer_nll(batch)
    (nll / n).backward()
    opt.step()
    emb = m.model.get_input_embeddings().weight
    assert torch.equal(emb[:first_new], before[:first_new])
    assert not torch.equal(emb[first_new:], before[first_new:])
    # the split modules compute what plain tied modules with the same rows compute
    ids = batch["input_ids"]
    with torch.no_grad():
        plain = torch.nn.functional.embedding(ids, emb)
        torch.testing.assert_close(m.model.get_input_embeddings()(ids), plain)
        hidden = torch.randn(3, emb.shape[1])
        torch.testing.assert_close(m.model.get_output_embeddings()(hidden), hidden @ emb.T)
    for p, q in zip(m.model.transformer.h[0].parameters(), block0, strict=True):
        assert p.grad is None and torch.equal(p, q)
    frozen = TopModule(
        str(tiny_lm), labels=labels, add_label_tokens=True, freeze_layers=1,
        train_added_embeddings=False,
    )  # fmt: skip
    assert not frozen.model.get_input_embeddings().weight.requires_grad
    # saved with the trained rows, as a plain model dir
    m.save(tmp_path / "m")
    again = TopModule.from_saved(tmp_path / "m")
    torch.testing.assert_close(again.model.get_input_embeddings().weight, emb.detach())
    assert again.model.get_output_embeddings().weight is again.model.get_input_embeddings().weight


def test_saved_causal_module_reloads_with_its_constraints(module, weather, tmp_path):
    from paraamr.top.module import TopModule

    utts = [utterance(t) for t in weather if len(utterance(t).split()) <= 4][:3]
    before = module.generate(utts, max_new_tokens=90)
    module.save(tmp_path / "m")
    again = TopModule.from_saved(tmp_path / "m")
    assert again.arch == "causal" and again.settings["constrained"]
    assert again.generate(utts, max_new_tokens=90) == before


def test_constrained_needs_a_decoder_only_model(tmp_path, weather):
    from tiny_top import build_tiny_bart

    from paraamr.errors import ConfigError
    from paraamr.top.module import TopModule

    bart = build_tiny_bart(tmp_path / "bart")
    with pytest.raises(ConfigError, match="model.constrained"):
        TopModule(str(bart), constrained=True)
