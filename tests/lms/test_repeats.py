"""The repeated-word block (``model.no_repeat_words``): words of partial tree answers, banned
followers counted by hand, and the logits processor on a real byte-level BPE tokenizer (the
tiny GPT-2's), and its wiring into generation."""

from __future__ import annotations

import pytest
import torch

from paraamr.lms.repeats import RepeatedWordBlocker, answer_words, banned_next_words


def test_answer_words_leave_out_labels_and_brackets():
    assert answer_words("(ROOT (S (NP (NNP PCCW) (POS 's)) (VP will report)") == [
        "PCCW", "'s", "will", "report"]  # fmt: skip
    assert answer_words("(ROOT (S (NP") == []
    assert answer_words("") == []


@pytest.mark.parametrize(
    ("words", "n", "banned"),
    [
        # "a b" occurred twice before, followed by c and d
        ("a b c a b d a b", 3, {"c", "d"}),
        ("a b c a b", 3, {"c"}),
        ("a b c", 3, set()),  # the tail "b c" has not occurred before
        ("x a x a", 2, {"x"}),  # bigram: after "a" came "x"
        ("a a", 2, {"a"}),
        ("the cat sat and the cat", 4, set()),  # trigram tail "and the cat" is new
        ("the cat sat and the cat", 3, {"sat"}),
        ("a", 2, set()),  # "a" has not been followed by anything
    ],
)
def test_banned_next_words_by_hand(words, n, banned):
    assert banned_next_words(words.split(), n) == banned


def test_blocker_masks_the_first_token_of_the_repeating_word_only(tiny_gpt2):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    prompt = tok("source words here", add_special_tokens=False)["input_ids"]
    rows = ["(S (NP the cat) (VP sat) (NP the cat", "(S (NP a dog) (VP ran"]
    ids = [prompt + tok(r, add_special_tokens=False)["input_ids"] for r in rows]
    width = max(map(len, ids))
    ids = [i + [tok.eos_token_id] * (width - len(i)) for i in ids]  # not read: same words
    blocker = RepeatedWordBlocker(tok, start=len(prompt), n=3)
    scores = torch.zeros(2, len(tok))
    out = blocker(torch.tensor(ids), scores.clone())
    sat = tok(" sat", add_special_tokens=False)["input_ids"][0]
    assert out[0, sat] == float("-inf")
    assert torch.isinf(out[0]).sum() == 1  # nothing else in row 0
    assert not torch.isinf(out[1]).any()  # row 1 repeats nothing
    assert blocker.bans == 1
    with pytest.raises(ValueError, match="at least 2"):
        RepeatedWordBlocker(tok, 0, 1)


def test_generate_texts_decodes_under_the_block_only_when_asked(tiny_gpt2, monkeypatch):
    """The module hands ``generate`` a blocker that reads from the prompt's end (decoder-only),
    and none without ``no_repeat_words``; the bans it counted are added up."""
    from paraamr.scpn.module import SCPNModule

    seen = []

    def fake_generate(self, batch, **kw):
        seen.append((batch["input_ids"].shape[1], kw.get("logits_processor")))
        for proc in kw.get("logits_processor") or []:
            proc.bans += 3
        return torch.full((batch["input_ids"].shape[0], 2), self.tokenizer.eos_token_id)

    monkeypatch.setattr(SCPNModule, "generate_ids", fake_generate)
    segs = [(("the cat sat on the mat .", "source"),)]
    for n in (None, 4):
        m = SCPNModule(tiny_gpt2, input_format="noparse", num_beams=1, max_target_length=30,
                       no_repeat_words=n)  # fmt: skip
        m.generate_texts(segs)
        m.generate_texts(segs)
        assert m.repeat_bans == (6 if n else 0)
    (width, none), _, (width4, procs), _ = seen
    assert none is None
    (blocker,) = procs
    assert isinstance(blocker, RepeatedWordBlocker)
    assert (blocker.n, blocker.start) == (4, width4)
