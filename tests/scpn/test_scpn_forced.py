"""Template-forced decoding (``model.force_template``): the pieces of literal templates by hand,
the replayed state on literal answers, every training answer of real Penn Treebank trees a
path the constraint allows (token by token, in the tokenizer's own split), random walks inside
the constraint read back by the answer reader as exactly the template, the shared logits
processor (its mask protocol and a row whose every allowed token another processor banned), and
an untrained model forced into its templates (greedy and beams)."""

from __future__ import annotations

import random

import pytest
import torch

from paraamr.errors import ConfigError, TreeError
from paraamr.lms.constrained import ConstrainedLogits
from paraamr.scpn import forced
from paraamr.scpn.forced import AnswerPattern, TemplateForcing, TokenTable, forcings
from paraamr.scpn.formats import linearize
from paraamr.scpn.infill import infill, read_answer


@pytest.mark.parametrize(
    ("template", "pieces"),
    [
        ("(ROOT (S (NP) (VP) (.)))", (" (ROOT (S (NP", ") (VP", ") (.", ")))")),
        ("(ROOT (SBARQ (WHADVP (WRB)) (SQ (MD) (NP) (VP)) (.)))",
         (" (ROOT (SBARQ (WHADVP (WRB", ")) (SQ (MD", ") (NP", ") (VP", ")) (.", ")))")),
        ("( ROOT  (NP ) )", (" (ROOT (NP", "))")),  # spacing normalised
        ("(ROOT (NP-SBJ) (PRP$))", (" (ROOT (NP-SBJ", ") (PRP$", "))")),
    ],
)  # fmt: skip
def test_pattern_pieces_of_literal_templates(template, pieces):
    assert AnswerPattern.from_template(template).pieces == pieces


@pytest.mark.parametrize(
    "bad", ["(ROOT (S (NP)", "(ROOT (NP the cat))", "(ROOT (NP) cat)", "(ROOT)", ""]
)
def test_a_malformed_or_worded_template_is_refused_and_that_row_decodes_freely(bad):
    with pytest.raises(TreeError):
        AnswerPattern.from_template(bad)
    rows, free = forcings([bad, "(ROOT (NP))"], table=None)
    assert rows[0] is None and rows[1] is not None and free == 1


def test_state_of_literal_answers():
    f = TemplateForcing(AnswerPattern.from_template("(ROOT (S (NP) (VP)))"), table=None)
    assert f.state("") == ("piece", 0, " (ROOT (S (NP")
    assert f.state(" (ROOT (S") == ("piece", 0, " (NP")
    assert f.state(" (ROOT (S (NP") == ("slot", 0, "")
    assert f.state(" (ROOT (S (NP we all") == ("slot", 0, " we all")
    assert f.state(" (ROOT (S (NP we)") == ("piece", 1, " (VP")
    assert f.state(" (ROOT (S (NP we) (VP left ?") == ("slot", 1, " left ?")
    assert f.state(" (ROOT (S (NP we) (VP left ?))") == ("piece", 2, ")")
    assert f.state(" (ROOT (S (NP we) (VP left ?)))") == ("done", 3, "")
    wrong = (" (ROOT (NP", " (ROOT (S (NP)", " (ROOT (S (NP we) (NP", " (ROOT (S (NP a) (VP b))) x",
           " (ROOT (S (NPx)")  # fmt: skip
    for text in wrong:
        with pytest.raises(ValueError):
            f.state(text)


@pytest.fixture(scope="module")
def table(tiny_gpt2):
    from transformers import AutoTokenizer

    return TokenTable(AutoTokenizer.from_pretrained(tiny_gpt2))


def test_every_training_answer_of_real_trees_is_allowed_token_by_token(ptb_trees, table):
    """The answers the model was trained on (``" " + infill(tree, d)`` in the tokenizer's own
    split) never leave the constraint of their template; after the last token only eos."""
    tok_strings = table.strings
    checked = 0
    for tree in ptb_trees[:60]:
        for depth in (3, 4):
            f = TemplateForcing(AnswerPattern.from_template(linearize(tree, depth)), table, 10_000)
            answer = " " + infill(tree, depth)
            ids = [t for s in (answer,) for t in _encode(table, s)]
            assert "".join(tok_strings[i] for i in ids) == answer
            for k, i in enumerate(ids):
                assert i in _ids(f.allowed(ids[:k])), (answer, k, tok_strings[i])
            assert f.allowed(ids) == [table.eos]
            checked += 1
    assert checked == 120


def _encode(table, text):
    return table.tokenizer(text, add_special_tokens=False)["input_ids"]


def _ids(allowed):
    if isinstance(allowed, tuple):
        mask, extra = allowed
        return set(torch.nonzero(mask).flatten().tolist()) | set(extra)
    return set(allowed)


WALK_TEMPLATES = [
    "(ROOT (S (NP) (VP) (.)))",
    "(ROOT (SBARQ (WHADVP (WRB)) (SQ (MD) (NP) (VP)) (.)))",
]


@pytest.mark.parametrize("template", WALK_TEMPLATES)
def test_random_walks_inside_the_constraint_read_back_as_the_template(template, table):
    rng = random.Random(0)
    for walk in range(40):
        f = TemplateForcing(AnswerPattern.from_template(template), table, max_slot_words=3)
        ids: list[int] = []
        for _ in range(400):
            a = f.allowed(ids)
            if a == [table.eos]:
                break
            if isinstance(a, tuple) and a[1] and rng.random() < 0.3:
                ids.append(rng.choice(a[1]))  # end the slot
            else:
                ids.append(rng.choice(sorted(_ids(a))))
        else:
            pytest.fail(f"walk {walk} did not end")
        ans = read_answer("".join(table.strings[i] for i in ids))
        assert ans.status == "ok" and ans.follows(template), ans
        assert all(len(w) for w in ans.text.split())


def test_a_slot_ends_by_force_after_its_word_limit(table):
    f = TemplateForcing(AnswerPattern.from_template("(ROOT (NP))"), table, max_slot_words=2)
    ids = _encode(table, " (ROOT (NP a b")
    a = f.allowed(ids)
    assert isinstance(a, list) and {table.strings[i] for i in a} <= {")", "))"}
    assert isinstance(f.allowed(_encode(table, " (ROOT (NP a")), tuple)  # one word: free


def test_constrained_logits_masks_and_lets_the_constraint_win_over_a_ban():
    class Fixed:
        def __init__(self, allowed):
            self.a = allowed

        def allowed(self, generated):
            return self.a

    mask = torch.tensor([True, False, True, False, False])
    proc = ConstrainedLogits([Fixed((mask, [3])), Fixed([1]), None], start=1)
    scores = torch.arange(15, dtype=torch.float).reshape(3, 5)
    scores[1, 1] = float("-inf")  # another processor banned the only token row 1 may write
    out = proc(torch.zeros(3, 2, dtype=torch.long), scores.clone())
    assert [torch.isfinite(r).nonzero().flatten().tolist() for r in out] == [
        [0, 2, 3], [1], [0, 1, 2, 3, 4]]  # fmt: skip
    assert out[0, 2].item() == 2.0 and out[1, 1].item() == 0.0  # kept / given back its place


def test_an_untrained_model_is_forced_into_its_templates(tiny_gpt2, monkeypatch):
    from paraamr.scpn.module import SCPNModule

    monkeypatch.setattr(forced, "MAX_SLOT_WORDS", 2)  # the tiny model has 128 positions
    t1, t2 = "(ROOT (S (NP) (VP) (.)))", "(ROOT (SQ (MD) (NP) (VP)))"
    segs = [((t, "syntax"), (s, "source")) for t, s in ((t1, "we left ."), (t2, "go home ."))]
    for beams in (1, 2):
        m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=beams,
                       max_new_tokens=90, force_template=True)  # fmt: skip
        free = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree",
                          num_beams=beams, max_new_tokens=90)  # fmt: skip
        outs = m.generate_texts(segs)
        free.generate_texts(segs)
        assert all(o.strip() for o in outs)
        c = m.answer_counts
        assert (c["answers"], c["ok"], c["follows_template"], c["unforced"]) == (2, 2, 2, 0)
        assert free.answer_counts["follows_template"] < 2  # untrained, free: off its template
        assert m.training  # train mode restored


def test_force_template_needs_tree_answers_and_leaves_the_no_template_twin_free(tiny_gpt2):
    from paraamr.scpn.job import recipe_signature
    from paraamr.scpn.module import SCPNModule

    with pytest.raises(ConfigError, match="force_template"):
        SCPNModule(tiny_gpt2, input_format="skeleton", output_format="plain", force_template=True)
    twin = SCPNModule(tiny_gpt2, input_format="noparse", output_format="tree", num_beams=1,
                      max_new_tokens=4, force_template=True)  # fmt: skip
    assert not twin.force_template and "forced" not in recipe_signature(twin)
    twin.generate_texts([(("we left .", "source"),)])
    assert "unforced" not in twin.answer_counts


def test_the_template_of_an_aesop_input_is_the_target_parse_not_the_source_parse(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="aesop", output_format="tree", num_beams=1)
    segs = m.fmt.segments("we left .", "(ROOT (S (NP) (VP) (.)))", "(ROOT (FRAG (NP) (.)))")
    assert m.template_of(segs) == "(ROOT (FRAG (NP) (.)))"
    m._read_tree_answer("(ROOT (FRAG (NP we) (. .)))", segs)
    assert m.answer_counts["follows_template"] == 1


class _Vocab:
    """A hand-made tokenizer surface: id -> text (id 0 is eos, the only special token)."""

    def __init__(self, strings):
        self.s, self.eos_token_id, self.all_special_ids = strings, 0, [0]

    def __len__(self):
        return len(self.s)

    def decode(self, ids):
        return "".join(self.s[i] for i in ids)


def test_allowed_sets_by_hand_with_tokens_that_cross_a_slots_end():
    """BPE merges a word with the brackets after it (SmolLM2: ``" ?)))"``): such a token may
    end a slot when its bracket part starts the next piece, and only then."""
    v = ["<eos>", " (", "ROOT", " (NP", " we", " ?", "))", ")", " ?))", ".))", "a(", "x", " ", "\n",
         " ?)", " (N", "P"]  # fmt: skip
    t = TokenTable(_Vocab(v))
    f = TemplateForcing(AnswerPattern.from_template("(ROOT (NP))"), t)
    names = lambda a: sorted(v[i] for i in _ids(a))  # noqa: E731
    assert names(f.allowed([])) == [" ", " ("]  # prefixes of " (ROOT (NP"; " (NP" is not one
    assert names(f.allowed([1])) == ["ROOT"]
    assert names(f.allowed([1, 2])) == [" ", " (", " (N", " (NP"]
    # slot start: a space then a word, a lone space, or a word with the whole close " ?))"
    assert names(f.allowed([1, 2, 3])) == [" ", " ?", " ?)", " ?))", " we"]
    # after a lone space: no white space first; ".))" makes the word "." and closes
    assert names(f.allowed([1, 2, 3, 12])) == [".))", "P", "ROOT", "x"]
    # inside the slot: words, or a close: ")" / "))" / " ?))" / ".))" / " ?)" (never "a(")
    assert names(f.allowed([1, 2, 3, 4])) == [" ", " ?", " ?)", " ?))", " we", ")", "))", ".))",
                                               "P", "ROOT", "x"]  # fmt: skip
    assert names(f.allowed([1, 2, 3, 4, 7])) == [")"]
    assert f.allowed([1, 2, 3, 4, 8]) == [0]  # " ?))" closed the root: eos only


def test_a_word_budget_ends_slots_early_by_hand():
    """Budget 2 over two slots: the first slot's first word spends it (one word, one more for
    the empty slot), so only a continuation of that word (no space, no bracket) or a close
    whose words part adds no word may follow; without a budget a new word may start."""
    v = ["<eos>", " (", "ROOT", " (NP", " we", " ?", ")", ") (", "x", " ", " ?)", "s)", " (VP",
         "))", ") (VP"]  # fmt: skip
    t = TokenTable(_Vocab(v))
    pattern = AnswerPattern.from_template("(ROOT (NP) (VP))")
    names = lambda a: sorted(v[i] for i in _ids(a))  # noqa: E731
    prefix = [1, 2, 3, 4]  # " (ROOT (NP we"
    free = TemplateForcing(pattern, t)
    assert names(free.allowed(prefix)) == [" ", " ?", " ?)", " we", ")", ") (", ") (VP", "ROOT",
                                           "s)", "x"]  # fmt: skip
    spent = TemplateForcing(pattern, t, max_words=2)
    assert names(spent.allowed(prefix)) == [")", ") (", ") (VP", "ROOT", "s)", "x"]
    assert spent.budget_used and not free.budget_used
    roomy = TemplateForcing(pattern, t, max_words=3)  # 1 written + 1 owed < 3: a word may start
    assert " we" in names(roomy.allowed(prefix)) and not roomy.budget_used
    # the second slot gets its one word even though the budget is spent
    second = [1, 2, 3, 4, 14]  # " (ROOT (NP we) (VP"
    assert " we" in names(spent.allowed(second))
    assert names(spent.allowed([*second, 4])) == [")", "))", "ROOT", "s)", "x"]


@pytest.mark.parametrize("template", WALK_TEMPLATES)
def test_random_walks_within_a_budget_keep_the_template_and_the_budget(template, table):
    rng = random.Random(1)
    pattern = AnswerPattern.from_template(template)
    for walk in range(40):
        budget = rng.randint(1, 8)
        f = TemplateForcing(pattern, table, max_slot_words=4, max_words=budget)
        ids: list[int] = []
        for _ in range(400):
            a = f.allowed(ids)
            if a == [table.eos]:
                break
            ids.append(rng.choice(sorted(_ids(a))))  # never favour ending a slot
        else:
            pytest.fail(f"walk {walk} did not end")
        ans = read_answer("".join(table.strings[i] for i in ids))
        assert ans.status == "ok" and ans.follows(template), ans
        assert len(ans.text.split()) <= max(budget, pattern.slots), (budget, ans.text)


def test_a_forced_answer_keeps_its_word_cap_inside_the_template(tiny_gpt2, monkeypatch):
    """A cap of one word over three-slot templates: each slot gets one word, the structure
    stays whole (a cut would break it), and both answers count as shortened by the cap."""
    from paraamr.scpn.module import SCPNModule

    monkeypatch.setattr(forced, "MAX_SLOT_WORDS", 2)
    t1, t2 = "(ROOT (S (NP) (VP) (.)))", "(ROOT (SQ (MD) (NP) (VP)))"
    segs = [((t, "syntax"), (s, "source")) for t, s in ((t1, "we left ."), (t2, "go home ."))]
    m = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=1,
                   max_new_tokens=90, force_template=True, word_cap=[0.1, 0])  # fmt: skip
    outs = m.generate_texts(segs)
    assert [len(o.split()) for o in outs] == [3, 3]
    c = m.answer_counts
    assert (c["ok"], c["follows_template"], c["repaired"]) == (2, 2, 0)
    assert m.word_cap_hits == 2
