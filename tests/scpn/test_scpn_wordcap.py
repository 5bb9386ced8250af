"""The length cap from the source (``model.word_cap``): answers cut after their n-th word on
literal trees, the cap's arithmetic and its errors, the stopping rule on a real tokenizer (beams
share their row's cap), the module's wiring (hand-computed outputs, counted cuts) and greedy
decoding with a cap giving the first words of decoding without one (tiny random GPT-2)."""

from __future__ import annotations

import pytest
import torch

from paraamr.errors import ConfigError
from paraamr.lms.repeats import answer_words
from paraamr.scpn.wordcap import WordCap, cap_for, cap_name, check_word_cap, cut_after_words


@pytest.mark.parametrize(
    ("text", "n", "cut"),
    [
        ("(ROOT (S (NP we) (VP left at noon)) (. .)))", 2, "(ROOT (S (NP we) (VP left"),
        ("(ROOT (S (NP we) (VP left at noon)) (. .)))", 4,
         "(ROOT (S (NP we) (VP left at noon"),
        ("(ROOT (NP we) (. .))", 9, "(ROOT (NP we) (. .))"),
        # exactly n words: nothing is cut, the closing brackets stay
        ("(ROOT (S (NP we) (VP left)))", 2, "(ROOT (S (NP we) (VP left)))"),
        ("(ROOT (S (NP) (VP run) (. .)))", 1, "(ROOT (S (NP) (VP run"),  # an empty slot: no word
        ("we left at noon .", 3, "we left at"),  # a plain answer
        ("(ROOT (S", 1, "(ROOT (S"),  # no word at all: nothing to cut
    ],
)  # fmt: skip
def test_cut_after_words_keeps_the_first_n_words_on_literal_answers(text, n, cut):
    assert cut_after_words(text, n) == cut
    assert answer_words(cut_after_words(text, n)) == answer_words(text)[:n]


def test_the_cap_is_ratio_times_source_words_plus_extra_rounded_up():
    assert cap_for("a b c d", [1.5, 3]) == 9  # 6 + 3
    assert cap_for("a b c", [1.2, 0]) == 4  # ceil(3.6)
    assert cap_for("a b c", [1, 0]) == 3
    assert cap_for("", [1, 0]) == 1  # never zero
    assert cap_name([1.2, 3]) == "1.2x+3"
    assert check_word_cap(None) is None
    for bad in ([1.5], "1.5", [0, 3], [1, -1], ["a", 1]):
        with pytest.raises(ConfigError, match="model.word_cap"):
            check_word_cap(bad)


def _ids(tok, *texts):
    return [tok(t, add_special_tokens=False)["input_ids"] for t in texts]


def test_word_cap_stops_a_row_once_it_starts_the_word_after_its_cap(tiny_gpt2):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    (prompt,) = _ids(tok, "prompt text")
    start = len(prompt)

    def done(answer, caps, beams=1):
        ids = torch.tensor([prompt + _ids(tok, answer)[0]] * (len(caps) * beams))
        return WordCap(tok, start, caps)(ids).tolist()

    assert done(" (ROOT (S (NP we) (VP left", [2]) == [False]  # two words: at the cap
    assert done(" (ROOT (S (NP we) (VP left at", [2]) == [True]  # the third has started
    assert done(" (ROOT (S (NP we) (VP left at", [3]) == [False]
    # with beam search each row's beams are consecutive rows and share its cap
    assert done(" we left at noon", [2, 4], beams=2) == [True, True, False, False]
    ids = torch.tensor([prompt])  # nothing generated yet
    assert WordCap(tok, start, [1])(ids).tolist() == [False]


def test_generate_texts_cuts_answers_at_the_sources_cap_and_counts_the_cuts(tiny_gpt2, monkeypatch):
    from paraamr.scpn.module import SCPNModule

    seen = []
    answer = " (ROOT (S (NP the old cat) (VP sat on the mat)) (. .)))"

    def fake_generate(self, batch, **kw):
        seen.append(kw.get("stopping_criteria"))
        (ids,) = _ids(self.tokenizer, answer)
        return torch.tensor([ids] * batch["input_ids"].shape[0])

    monkeypatch.setattr(SCPNModule, "generate_ids", fake_generate)
    segs = [(("(ROOT (S (NP) (VP) (.)))", "syntax"), (src, "source"))
            for src in ("the cat sat .", "a b c d e f g h i j")]  # fmt: skip
    plain = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=1)
    capped = SCPNModule(tiny_gpt2, input_format="skeleton", output_format="tree", num_beams=1,
                        word_cap=[0.5, 1])  # fmt: skip
    # by hand: caps ceil(0.5 * 4 + 1) = 3 and ceil(0.5 * 10 + 1) = 6 of the answer's 8 words
    assert plain.generate_texts(segs) == ["the old cat sat on the mat."] * 2
    assert capped.generate_texts(segs) == ["the old cat", "the old cat sat on the"]
    assert (plain.word_cap_hits, capped.word_cap_hits) == (0, 2)
    assert capped.answer_counts["repaired"] == 2  # its brackets were closed
    assert [type(c).__name__ for c in seen[0]] == ["RootClosed"]
    root, cap = seen[1]
    assert type(cap).__name__ == "WordCap" and cap.caps == [3, 6]


class _Script:
    """A ``LogitsProcessor`` that makes every row write ``ids`` (then end)."""

    def __init__(self, ids, start, eos):
        self.ids, self.start, self.eos = ids, start, eos

    def __call__(self, input_ids, scores):
        step = input_ids.shape[1] - self.start
        scores[:] = float("-inf")
        scores[:, self.ids[step] if step < len(self.ids) else self.eos] = 0.0
        return scores


def test_generate_stops_each_row_of_a_batch_at_its_own_cap(tiny_gpt2):
    """In ``generate``, with a script that writes 8 words: the row with cap 3 stops after 3
    words (the 4th begun), the row with cap 5 after 5, and both are prefixes of the script."""
    from transformers import LogitsProcessorList, StoppingCriteriaList

    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="noparse", output_format="plain", num_beams=1)
    m.model.eval()
    tok = m.tokenizer
    script = " (ROOT (S (NP the old cat) (VP sat on the mat)) (. .)))"
    (ids,) = _ids(tok, script)
    batch = m.encoder.prompts([((s, "source"),) for s in ("a b c .", "d e f .")])
    start = batch["input_ids"].shape[1]
    with torch.no_grad():
        out = m.model.generate(
            **batch, max_new_tokens=len(ids) + 2, do_sample=False, pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
            logits_processor=LogitsProcessorList([_Script(ids, start, tok.eos_token_id)]),
            stopping_criteria=StoppingCriteriaList([WordCap(tok, start, [3, 5])]),
        )  # fmt: skip
    texts = tok.batch_decode(out[:, start:], skip_special_tokens=True)
    assert [answer_words(t) for t in texts] == [
        ["the", "old", "cat", "sat"], ["the", "old", "cat", "sat", "on", "the"]]  # fmt: skip
    assert all(script.startswith(t) for t in texts)
    assert [cut_after_words(t, c) for t, c in zip(texts, [3, 5], strict=True)] == [
        " (ROOT (S (NP the old cat", " (ROOT (S (NP the old cat) (VP sat on"]  # fmt: skip
