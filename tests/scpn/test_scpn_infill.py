"""Template infilling and the CPU recipe: tree answers on literal trees (malformed ones too), the
answer's loss mask on a hand-built batch, the stop at the root's closing bracket, frozen layers
(gradients and a hand parameter count), the bf16 fallback, eval mode restored after a failed
generation, and ``sentence<TAB>template`` input (tiny random models)."""

from __future__ import annotations

import pytest
import torch

from paraamr.scpn.formats import linearize
from paraamr.scpn.infill import detokenize, infill, read_answer
from paraamr.scpn.pairs import TrainPair

PARSE = (
    "(ROOT (SBARQ (WHADVP (WRB how)) (SQ (MD can) (NP (PRP i)) (VP (VB make) (NP (NN money)) "
    "(ADVP (RB online)))) (. ?)))"
)


# tree answers ---------------------------------------------------------------------------------
def test_infill_cuts_at_depth_with_the_words_in_the_leaves():
    # written by hand from the parse: nodes at depth <= d, each cut node holding its words
    assert infill(PARSE, 4) == (
        "(ROOT (SBARQ (WHADVP (WRB how)) (SQ (MD can) (NP i) (VP make money online)) (. ?)))"
    )
    assert infill(PARSE, 3) == "(ROOT (SBARQ (WHADVP how) (SQ can i make money online) (. ?)))"
    assert infill(PARSE, 1) == "(ROOT how can i make money online ?)"
    for d in (2, 3, 4, 5, None):  # its word-free version is the template of the same depth
        assert read_answer(infill(PARSE, d)).structure == linearize(PARSE, d)
        assert read_answer(infill(PARSE, d)).text == "how can i make money online?"


@pytest.mark.parametrize(
    ("answer", "text", "status", "structure"),
    [
        ("(ROOT (S (NP we) (VP left)) (. .))", "we left.", "ok", "(ROOT (S (NP) (VP)) (.))"),
        # runs on after the root closes: the rest is ignored
        ("(ROOT (NP dogs)) (ROOT (NP cats))", "dogs", "ok", "(ROOT (NP))"),
        # unclosed brackets are closed, the words kept
        ("(ROOT (S (NP we) (VP left", "we left", "repaired", "(ROOT (S (NP) (VP)))"),
        # a stray closing bracket before the root and a stray word
        (") now (ROOT (NP it))", "now it", "repaired", "(ROOT (NP))"),
        (") (ROOT (NP it))", "it", "repaired", "(ROOT (NP))"),  # the bracket alone
        # a plain sentence
        ("we left .", "we left.", "repaired", None),
        # an empty slot is a node, not the word "NP"
        ("(ROOT (S (NP) (VP run)))", "run", "ok", "(ROOT (S (NP) (VP)))"),
        # no word at all: a counted failure, never a made-up text
        ("(ROOT (S (NP) (VP)))", "", "failed", "(ROOT (S (NP) (VP)))"),
        ("", "", "failed", None),
        ("((((", "", "failed", "( ( ( ()))))"),
    ],
)
def test_read_answer_on_literal_and_malformed_trees(answer, text, status, structure):
    a = read_answer(answer)
    assert (a.text, a.status) == (text, status)
    if structure is not None and "( (" not in structure:
        assert a.structure == structure


def test_follows_and_detokenize():
    a = read_answer("(ROOT (S (NP we) (VP left)) (. .))")
    assert a.follows("(ROOT (S (NP) (VP)) (.))") and a.follows("(ROOT(S (NP)(VP))(.))")
    assert not a.follows("(ROOT (S (NP) (VP)))")
    assert detokenize(["i", "do", "n't", "know", ",", "they", "'re", "here", "."]) == (
        "i don't know, they're here."
    )
    assert detokenize(["costs", "$", "5", "(", "about", ")"]) == "costs $5 (about)"


def test_root_closed_stops_each_row_at_its_root():
    from paraamr.scpn.module import RootClosed

    deltas = torch.tensor([0, 1, -1, 2, -2])  # id 1 "(", 2 ")", 3 "((", 4 "))"
    stop = RootClosed(deltas, start=2)  # two prompt columns are ignored
    ids = torch.tensor([[2, 2, 1, 0, 2], [1, 1, 3, 4, 0], [2, 2, 0, 0, 0], [0, 0, 1, 1, 2]])
    # row 0 opens then closes; row 1: +2 -2 closes; row 2 never opened; row 3 still open
    assert stop(ids).tolist() == [True, True, False, False]


# encoder and module -------------------------------------------------------------------------
def _tree_pairs():
    return [
        TrainPair("can i earn money on the web ?", "how can i make money online ?", None,
                  linearize(PARSE), PARSE),
        TrainPair("we left .", "we left .", None, "(ROOT (S (NP (PRP)) (VP (VBD)) (.)))",
                  "(ROOT (S (NP (PRP we)) (VP (VBD left)) (. .)))"),
    ]  # fmt: skip


def test_tree_answer_loss_mask_on_a_hand_built_batch(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", template_depth=4,
                   max_target_length=60)  # fmt: skip
    tok, enc = m.tokenizer, m.encoder
    batch = enc.batch(_tree_pairs()[::-1])  # the short pair first, the long one pads it
    # hand layout of row 0: depth-4 template <sep> source <para>, then " " + tree answer + eos
    template = "(ROOT (S (NP (PRP)) (VP (VBD)) (.)))"
    answer = "(ROOT (S (NP (PRP we)) (VP (VBD left)) (. .)))"
    prompt = tok(f"{template} <sep> we left . <para>", add_special_tokens=False)["input_ids"]
    target = tok(" " + answer, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    n = len(prompt)
    assert batch["input_ids"][0].tolist()[: n + len(target)] == prompt + target
    lab = batch["labels"][0].tolist()
    assert lab[:n] == [-100] * n and lab[n : n + len(target)] == target
    assert set(lab[n + len(target) :]) <= {-100}
    # a pair without its target tree is an error that says what is missing
    with pytest.raises(Exception, match="target_tree"):
        enc.batch([TrainPair("a", "b", None, "(ROOT (NP (NN)))")])


def test_each_training_pair_gets_one_depth_for_template_and_answer(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree",
                   train_template_depths=[3, 4])  # fmt: skip
    enc = m.encoder
    pairs = [p._replace(source=f"{p.source} {k}") for k in range(12) for p in _tree_pairs()[:1]]
    seen = set()
    for p in pairs:
        template = enc.segments(p)[0][0]
        assert read_answer(enc.answer(p)).structure == template  # same depth on both sides
        seen.add(template.count("("))
        assert enc.segments(p) == enc.segments(p)  # the same depth every time
    assert seen == {
        len(linearize(PARSE, 3).split("(")) - 1,
        len(linearize(PARSE, 4).split("(")) - 1,
    }


def test_freeze_really_freezes_and_the_trainable_count_is_the_hand_count(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, freeze_layers=1)
    gpt = m.model.transformer
    # hand count: block 1, the final layer norm (the head is tied to wte, frozen with it)
    want = sum(p.numel() for p in gpt.h[1].parameters()) + sum(
        p.numel() for p in gpt.ln_f.parameters()
    )
    assert m.freeze_stats["trainable"] == want
    assert m.freeze_stats["total"] == sum(p.numel() for p in m.model.parameters())
    batch = m.encoder.batch([TrainPair("we left .", "they went .", None, "(ROOT (S))")])
    m.model(**batch).loss.backward()
    for p in (*gpt.wte.parameters(), *gpt.wpe.parameters(), *gpt.h[0].parameters()):
        assert p.grad is None
    assert all(p.grad is not None for p in gpt.h[1].parameters())
    opt = m.configure_optimizers()["optimizer"]
    assert sum(p.numel() for g in opt.param_groups for p in g["params"]) == want
    with pytest.raises(Exception, match="freezes every block"):
        SCPNModule(tiny_gpt2, freeze_layers=2)


def test_auto_precision_trains_bf16_only_where_the_cpu_has_it(monkeypatch):
    from paraamr import precision
    from paraamr.training import recipe

    monkeypatch.setattr(precision, "cpu_bf16_support", lambda: (False, "no AVX512-BF16 here"))
    assert recipe.resolve_precision("auto", "cpu") == ("32-true", None)
    assert recipe.resolve_precision("bf16-mixed", "cpu") == (
        "bf16-mixed", "bf16-mixed on this CPU is slower than fp32: no AVX512-BF16 here"
    )  # fmt: skip
    assert recipe.resolve_precision("32", "cpu") == ("32", None)
    monkeypatch.setattr(precision, "cpu_bf16_support", lambda: (True, "the CPU has AMX"))
    assert recipe.resolve_precision("auto", "cpu") == ("bf16-mixed", None)
    assert recipe.resolve_precision("bf16-mixed", "cpu") == ("bf16-mixed", None)


def test_generate_restores_train_mode_after_an_exception(tiny_gpt2, monkeypatch):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=1)
    m.model.train()
    calls = []

    def boom(**kw):
        calls.append(m.model.training)
        raise RuntimeError("out of memory")

    monkeypatch.setattr(m.model, "generate", boom)
    with pytest.raises(RuntimeError, match="out of memory"):
        m.generate_texts([(("(ROOT (S (NP) (VP)))", "syntax"), ("we left .", "source"))])
    assert calls == [False] and m.model.training  # it ran in eval mode, train mode is back


def test_tree_model_generates_counts_and_stops_at_the_root(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=1,
                   max_new_tokens=6)  # fmt: skip
    segs = [(("(ROOT (S (NP) (VP)))", "syntax"), (s, "source")) for s in ("we left .", "go .")]
    outs = m.generate_texts(segs)
    assert len(outs) == 2 and all(isinstance(o, str) for o in outs)
    c = m.answer_counts
    assert c["answers"] == 2 and c["ok"] + c["repaired"] + c["failed"] == 2


def test_answer_only_head_loss_equals_the_models_own_loss(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree",
                   max_target_length=60)  # fmt: skip
    m.model.eval()
    batch = m.encoder.batch(_tree_pairs())
    with torch.no_grad():
        assert m.loss(batch).item() == pytest.approx(m.model(**batch).loss.item(), rel=1e-5)


# sentence<TAB>template input -------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_tree_dir(tmp_path_factory, tiny_gpt2):
    from paraamr.scpn.module import SCPNModule
    from paraamr.scpn.parse_generator import PARSE_INDEX, RetrievalParseGenerator

    d = tmp_path_factory.mktemp("tree") / "best_model"
    SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", max_new_tokens=6,
               num_beams=1, max_source_length=12, max_syntax_length=40).save(d)  # fmt: skip
    RetrievalParseGenerator.from_parses(["(ROOT (S (NP (PRP)) (VP (VBD)) (.)))"]).save(
        d / PARSE_INDEX
    )
    return d


def test_tree_model_takes_each_sentences_own_template(tiny_tree_dir):
    from paraamr.scpn.paraphrase import Paraphraser
    from paraamr.scpn.parse_generator import TemplateError

    p = Paraphraser.load(tiny_tree_dir, batch_size=2)
    t1, t2 = "(ROOT (S (NP) (VP) (.)))", "(ROOT (SQ (VBD) (NP) (VP) (.)))"
    rows = p.paraphrase(["I slept .", "You ran ."], [t1, t2], per_sentence=True)
    # the template goes in as it is (no retrieval: t2 fits no training parse)
    assert [(r["index"], r["template"], r["target_parse"], r["fit"]) for r in rows] == [
        (0, t1, t1, "template"), (1, t2, t2, "template")]  # fmt: skip
    assert all(isinstance(r["output"], str) for r in rows)
    assert p.module.answer_counts["answers"] == 2
    with pytest.raises(TemplateError, match="in.tsv:7"):
        p.paraphrase(["a", "b"], [t1, "(ROOT (S"], per_sentence=True, lines=[3, 7], where="in.tsv")


def test_cli_tab_templates_keep_lines_aligned_and_count_skips(tiny_tree_dir, tmp_path, capsys):
    from paraamr.cli import main

    inp = tmp_path / "in.tsv"
    inp.write_text(
        "I slept .\t(ROOT (S (NP) (VP) (.)))\n"
        "no template here\n"
        "You ran .\t(ROOT (S (NP\n"
        "We left .\t(ROOT (S (VP) (.)))\n",
        encoding="utf-8",
    )
    main(["paraphrase", "--model", str(tiny_tree_dir), "--input", str(inp)])
    out = capsys.readouterr()
    lines = out.out.split("\n")[:-1]
    assert len(lines) == 4 and lines[1] == "" and lines[2] == ""
    assert "paraphrased 2 of 2; skipped 2" in out.err and "answers following" in out.err
    assert "no <TAB>template" in out.err and "bad template" in out.err  # each skip says why
    main(["paraphrase", "--model", str(tiny_tree_dir), "--input", str(inp), "--out",
          str(tmp_path / "o"), "--chunk-size", "1"])  # fmt: skip
    sharded = capsys.readouterr().out.split("\n")[:-1]
    assert sharded == lines  # the shard runner gives the same aligned lines


def test_force_template_reaches_the_model_from_the_cli_and_the_paraphraser(
    tiny_tree_dir, tmp_path, capsys, monkeypatch
):
    from paraamr.cli import main
    from paraamr.scpn.module import SCPNModule
    from paraamr.scpn.paraphrase import Paraphraser

    assert Paraphraser.load(tiny_tree_dir, force_template=True).module.force_template
    assert not Paraphraser.load(tiny_tree_dir).module.force_template  # the model's own: off
    seen = []
    real = SCPNModule.generate_texts

    def spy(self, *a, **kw):
        seen.append(self.force_template)
        return real(self, *a, **kw)

    monkeypatch.setattr(SCPNModule, "generate_texts", spy)
    inp = tmp_path / "in.tsv"
    inp.write_text("I slept .\t(ROOT (S (NP) (VP) (.)))\nno template\n", encoding="utf-8")
    main(["paraphrase", "--model", str(tiny_tree_dir), "--input", str(inp), "--force-template"])
    assert seen == [True] and len(capsys.readouterr().out.split("\n")[:-1]) == 2


# the template-following check ------------------------------------------------------------------
T_A, T_B = "(ROOT (S (NP (NN x)) (VP (VB y))))", "(ROOT (SQ (VBZ is) (NP (NN x))))"
T_C = "(ROOT (FRAG (NP (NN x))))"
TREES = {"s0": T_A, "s1": T_B, "s2": T_A, "s3": T_C, "r0": T_B, "r1": T_A, "r2": T_A, "r3": T_B,
         "oA": T_A, "oB": T_B}  # fmt: skip


class _DictParser:
    name = "dict"

    def signature(self):
        return "dict"

    def parse(self, sentences):
        from paraamr.parsers.base import Parsed

        return [Parsed((s,), TREES[s]) for s in sentences]


class _Follower:
    """A stand-in paraphraser: writes a sentence with the given template, or copies."""

    def __init__(self, copy: bool):
        self.copy = copy

    def paraphrase(self, sources, templates, per_sentence):
        assert per_sentence
        by_template = {linearize(T_A, 3): "oA", linearize(T_B, 3): "oB"}
        return [{"output": s if self.copy else by_template.get(t, "")}
                for s, t in zip(sources, templates, strict=True)]  # fmt: skip


def test_follow_check_hand_computed():
    from paraamr.scpn.follow import follow_check

    pairs = [("s0", "r0"), ("s1", "r1"), ("s2", "r2"), ("s3", "r3")]
    # swapped: pair i gets pair (i + 2) % 4's reference template: A, B, B, A
    # sources' templates A, B, A, C -> copying matches 2 of 4 swapped; own (B, A, A, B): 1 of 4
    res = follow_check(_Follower(copy=False), pairs, _DictParser(), depth=3)
    assert (res["n"], res["match_swapped"], res["match_own"]) == (4, 1.0, 1.0)
    assert (res["copy_match_swapped"], res["copy_match_own"]) == (0.5, 0.25)
    copying = follow_check(_Follower(copy=True), pairs, _DictParser(), depth=3)
    assert (copying["match_swapped"], copying["match_own"]) == (0.5, 0.25)


def test_the_jobs_template_depth_reaches_a_saved_model(tiny_tree_dir):
    """``model.template_depth=3`` at evaluation: a model saved with depth 4 cuts the target
    parses of its prompts to depth 3 (the template written by hand), and the signature says so;
    without the setting it keeps the depth it was saved with."""
    from omegaconf import OmegaConf

    from paraamr.scpn.job import decoding_overrides, recipe_signature
    from paraamr.scpn.module import SCPNModule

    full = "(ROOT (S (NP (PRP)) (VP (VBD) (PP (IN) (NP (NN)))) (.)))"  # word-free, as parsed
    saved = SCPNModule.load(tiny_tree_dir)
    cut = SCPNModule.load(tiny_tree_dir, **decoding_overrides(OmegaConf.create(
        {"template_depth": 3, "no_repeat_words": None})))  # fmt: skip
    same = SCPNModule.load(tiny_tree_dir, **decoding_overrides(OmegaConf.create({})))
    assert saved.fmt.segments("we left .", None, full)[0] == (
        "(ROOT (S (NP (PRP)) (VP (VBD) (PP)) (.)))", "syntax")  # fmt: skip
    assert cut.fmt.segments("we left .", None, full)[0] == ("(ROOT (S (NP) (VP) (.)))", "syntax")
    assert same.fmt.segments("we left .", None, full) == saved.fmt.segments("we left .", None,
                                                                           full)  # fmt: skip
    assert "depth:3," in recipe_signature(cut) and "depth:4," in recipe_signature(saved)
    capped = SCPNModule.load(tiny_tree_dir, **decoding_overrides({"word_cap": [1.5, 3]}))
    assert capped.word_cap == [1.5, 3.0] and recipe_signature(capped).endswith(",word-cap:1.5x+3")
    assert "word-cap" not in recipe_signature(saved)
    forced = SCPNModule.load(tiny_tree_dir, **decoding_overrides({"force_template": True}))
    assert forced.force_template and not saved.force_template
    assert recipe_signature(forced).endswith(",forced-template")
    both = SCPNModule.load(tiny_tree_dir, **decoding_overrides({"force_template": True,
                                                                "word_cap": [1.5, 3]}))  # fmt: skip
    assert recipe_signature(both).endswith(",word-cap:1.5x+3,forced-template:slot-cap")
    assert "forced" not in recipe_signature(saved)
