"""Syntactically controlled paraphrasing: formats, pairs, loss, training/resume, parse generator,
paraphraser and evaluation (tiny random models; shared data). Table 6's pipeline is tested in
tests/tables/test_table6.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from paraamr.corpus.records import Paraphrase, SourceRecord
from paraamr.errors import ConfigError, ParaAMRError, TreeError
from paraamr.scpn.formats import get_format, height, linearize
from paraamr.scpn.pairs import TrainPair, attach_parses, select_pairs

TREE = "(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory):
    from paraamr.testing.tiny_models import build_tiny_seq2seq

    return str(build_tiny_seq2seq(tmp_path_factory.mktemp("t5"), init_std=None))


# formats --------------------------------------------------------------------------------------
def test_linearize_and_prune_literal_tree():
    assert linearize(TREE) == ("(ROOT (S (NP (DT) (NN)) (VP (VBD) (PP (IN) (NP (DT) (NN)))) (.)))")
    assert linearize(TREE, 2) == "(ROOT (S))"
    assert linearize(TREE, 3) == "(ROOT (S (NP) (VP) (.)))"
    assert linearize(TREE, 4) == "(ROOT (S (NP (DT) (NN)) (VP (VBD) (PP)) (.)))"
    word_free = linearize(TREE)
    assert linearize(word_free, 4, has_words=False) == linearize(TREE, 4)
    assert height(word_free) == 6 and height("(ROOT (S (NP) (VP) (.)))") == 3
    with pytest.raises(TreeError):
        linearize("(ROOT (S (NP)")


def test_input_formats_on_literal_trees():
    src = "(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))"
    sp, tp = linearize(src), linearize(TREE)
    s = "I know ."
    assert get_format("scpn").text(s, sp, tp) == f"I know . <sep> {tp}"
    assert get_format("aesop").text(s, sp, tp) == (
        "I know . <sep> (ROOT (S (NP (PRP)) (VP (VBP)) (.))) <sep> "
        "(ROOT (S (NP (DT) (NN)) (VP (VBD) (PP)) (.)))"
    )
    assert (
        get_format("skeleton", depth=3).text(s, sp, tp) == "(ROOT (S (NP) (VP) (.))) <sep> I know ."
    )
    assert get_format("noparse").text(s, sp, tp) == s
    assert (
        get_format("aesop", depth=2).signature() == "fmt:aesop,src-parse:d2,tgt-parse:d2,sep:<sep>"
    )
    with pytest.raises(TreeError, match="needs the target parse"):
        get_format("scpn").segments(s, sp, None)
    with pytest.raises(ConfigError, match="input_format"):
        get_format("bogus")


# pairs ----------------------------------------------------------------------------------------
def _recs(n, k=7, ppl=None):
    return [
        SourceRecord(f"s{i}", tuple(Paraphrase(f"p{i}_{j}", perplexity=ppl) for j in range(k)))
        for i in range(n)
    ]


def test_authors_preset_identity_cap_and_dev_split():
    stats = Counter()
    train, dev = select_pairs(_recs(10), max_paraphrases=5, dev_sources=3, seed=1, stats=stats)
    # 7 sources: identity + 5 paraphrases each; 3 dev sources: 5 paraphrases, no identity
    assert len(train) == 7 * 6 and len(dev) == 3 * 5
    assert [p.target for p in train[::6]] == [f"s{i}" for i in range(7)]
    assert {p.source for p in dev} == {"s7", "s8", "s9"}
    assert all(p.source != p.target for p in dev)
    assert stats["dropped_cap"] == 10 * 2
    again, _ = select_pairs(_recs(10), max_paraphrases=5, dev_sources=3, seed=1)
    other, _ = select_pairs(_recs(10), max_paraphrases=5, dev_sources=3, seed=2)
    assert again == train and other != train  # seeded shuffle
    both, _ = select_pairs(_recs(3, 1), dev_sources=1, identity=False, both_directions=True)
    assert both == [TrainPair("s0", "p0_0"), TrainPair("p0_0", "s0"), TrainPair("s1", "p1_0"),
                    TrainPair("p1_0", "s1")]  # fmt: skip


def test_pairs_perplexity_filter_and_errors():
    recs = [SourceRecord("a", (Paraphrase("b", 50.0), Paraphrase("c", 90.0))), *_recs(2, 1, 10.0)]
    train, _ = select_pairs(recs, max_perplexity=85, dev_sources=1)
    assert [p.target for p in train] == ["a", "b", "s0", "p0_0"]
    with pytest.raises(ParaAMRError, match="max_perplexity=null"):
        select_pairs(_recs(3), max_perplexity=85, dev_sources=1)
    with pytest.raises(ConfigError, match="dev_sources"):
        select_pairs(_recs(3), dev_sources=3)


class _CountingParser:
    name = "fake"

    def __init__(self):
        self.seen = []

    def signature(self):
        return "fake"

    def parse(self, sentences):
        from paraamr.errors import ParserError
        from paraamr.parsers.base import Parsed

        self.seen.extend(sentences)
        return [
            ParserError("no") if s == "bad" else Parsed((s,), f"(ROOT (NP (NN {s})))")
            for s in sentences
        ]


def test_parse_cache_skips_and_counts_a_truncated_last_line(tmp_path):
    """A run killed mid-write leaves half a line; the next run reads the rest of the cache
    (it raised a JSONDecodeError before the caches shared paraamr.jsonl_cache)."""
    from paraamr.scpn.pairs import ParseCache

    path = tmp_path / "c.jsonl"
    ParseCache(path, "fake").add({"a": "(ROOT (NP (NN a)))", "b": "(ROOT (NP (NN b)))"})
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"text": "c", "par')
    again = ParseCache(path, "fake")
    assert "a" in again and "b" in again and "c" not in again
    assert again.file.n_bad_lines == 1


def test_each_sentence_parsed_once_cached_and_failures_counted(tmp_path):
    from paraamr.scpn.pairs import ParseCache

    pairs = [TrainPair("a", "a"), TrainPair("a", "b"), TrainPair("bad", "a"), TrainPair("a", "bad")]
    parser, stats = _CountingParser(), Counter()
    cache = ParseCache(tmp_path / "c.jsonl", "fake")
    out = attach_parses(pairs, parser, cache=cache, stats=stats)
    assert sorted(parser.seen) == ["a", "b", "bad"]
    np_nn = "(ROOT (NP (NN)))"
    assert out == [TrainPair("a", "a", np_nn, np_nn, "(ROOT (NP (NN a)))"),
                   TrainPair("a", "b", np_nn, np_nn, "(ROOT (NP (NN b)))")]  # fmt: skip
    assert stats["dropped_source_unparsed"] == 1 and stats["dropped_target_unparsed"] == 1
    parser2 = _CountingParser()  # a new run reads the cache file: nothing parsed again
    assert attach_parses(pairs, parser2, cache=ParseCache(tmp_path / "c.jsonl", "fake")) == out
    assert parser2.seen == []
    with pytest.raises(ConfigError, match="parse_cache"):
        ParseCache(tmp_path / "c.jsonl", "other-parser")
    # a cache of word-free parses only (written before trees with words were kept): its
    # sentences are parsed again, so template infilling gets its answers
    old = tmp_path / "old.jsonl"
    old.write_text('{"parser": "fake"}\n{"text": "a", "parse": "(ROOT (NP (NN)))"}\n')
    parser3 = _CountingParser()
    again = attach_parses(pairs[:1], parser3, cache=ParseCache(old, "fake"))
    assert parser3.seen == ["a"] and again[0].target_tree == "(ROOT (NP (NN a)))"


def test_pool_pairs_interleaves_dev_sums_counts_and_refuses_mixed_parsers():
    from paraamr.scpn.pairs import PairSet, pool_pairs

    def part(tag, n_train, n_dev, parser="fake"):
        train = [TrainPair(f"{tag}{i}", "t") for i in range(n_train)]
        dev = [TrainPair(f"{tag}d{i}", "t") for i in range(n_dev)]
        return PairSet(train, dev, Counter(train_pairs=n_train, dev_pairs=n_dev), parser)

    pooled = pool_pairs([("a", part("a", 2, 3)), ("b", part("b", 1, 1)), ("c", part("c", 1, 2))])
    assert [p.source for p in pooled.train] == ["a0", "a1", "b0", "c0"]
    assert [p.source for p in pooled.dev] == ["ad0", "bd0", "cd0", "ad1", "cd1", "ad2"]
    assert pooled.stats["train_pairs"] == 4 and pooled.stats["dev_pairs"] == 6
    assert (pooled.stats["a:dev_pairs"], pooled.stats["c:dev_pairs"]) == (3, 2)
    assert pooled.parser == "fake"
    with pytest.raises(ConfigError, match="different parsers"):
        pool_pairs([("a", part("a", 1, 1)), ("b", part("b", 1, 1, parser="other"))])


def test_datamodule_pools_real_corpora_each_split_and_limited_on_its_own(data_dir, pairs_tsv):
    """``data.path`` as a list (the ``table6_pooled`` preset's shape): every corpus gets
    its own first ``limit_sources`` sources and its own last ``dev_sources`` as dev, checked
    against the files read here by hand (PAN: label 1 lines; MSRP: quality 1 rows)."""
    from paraamr.scpn.data import build_datamodule

    pan = data_dir / "paraphrase" / "pan"
    s1 = (pan / "pan-train_s1.txt").read_text(encoding="utf-8").splitlines()
    labels = (pan / "pan-train.labels").read_text(encoding="utf-8").split()
    pan_pos = [s.strip() for s, lab in zip(s1, labels, strict=True) if lab == "1"][:4]
    msrp_rows = (data_dir / "paraphrase/msrp/msr-para-train.tsv").read_text(
        encoding="utf-8-sig").splitlines()[1:]  # fmt: skip
    msrp_pos = [r.split("\t")[3] for r in msrp_rows if r.split("\t")[0] == "1"][:4]
    mine = [ln.split("\t")[0] for ln in pairs_tsv.read_text(encoding="utf-8").splitlines()[:4]]
    dm = build_datamodule(
        [str(pairs_tsv), "paraphrase/msrp/msr-para-train.tsv", "paraphrase/pan"],
        ["pairs", "msrp", "pan-train"],
        encoder=None, parser=_CountingParser(), data_dir=str(data_dir), max_paraphrases=1,
        identity=False, dev_sources=1, limit_sources=4, batch_size=2,
    )  # fmt: skip
    assert [p.source for p in dm.pairs.train] == mine[:3] + msrp_pos[:3] + pan_pos[:3]
    assert [p.source for p in dm.dev] == [mine[3], msrp_pos[3], pan_pos[3]]
    assert dm.pairs.stats["pan:sources"] == 4 and dm.pairs.stats["train_pairs"] == 9
    with pytest.raises(ConfigError, match="2 formats for 3"):
        build_datamodule([str(pairs_tsv)] * 3, ["pairs", "pairs"], encoder=None,
                         parser=_CountingParser())  # fmt: skip


# loss -----------------------------------------------------------------------------------------
PAIRS = [
    TrainPair("the cat sat .", "a cat was sitting .", "(ROOT (S (NP) (VP) (.)))",
              "(ROOT (S (NP (DT) (NN)) (VP (VBD) (VP)) (.)))"),
    TrainPair("dogs bark", "barking dogs", "(ROOT (S (NP) (VP)))", "(ROOT (NP (VBG) (NNS)))"),
]  # fmt: skip


def _manual_ce(logits, targets):
    logp = torch.log_softmax(logits.double(), -1)
    return -torch.stack([logp[i, t] for i, t in targets]).mean()


def test_decoder_only_loss_is_on_the_target_only(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="skeleton", parse_depth=3)
    tok, enc = m.tokenizer, m.encoder
    batch = enc.batch(PAIRS)
    # hand layout of row 1: prompt = skeleton <sep> source <para>, then " barking dogs" + eos
    prompt = tok("(ROOT (NP (VBG) (NNS))) <sep> dogs bark <para>", add_special_tokens=False)
    target = tok(" barking dogs", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    n = len(prompt["input_ids"])
    row = batch["input_ids"][1].tolist()
    assert row[:n] == prompt["input_ids"] and row[n : n + len(target)] == target
    lab = batch["labels"][1].tolist()
    assert lab[:n] == [-100] * n and lab[n : n + len(target)] == target
    assert set(lab[n + len(target) :]) <= {-100}
    m.model.eval()
    with torch.no_grad():
        loss = m.model(**batch).loss
        logits = m.model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
        ).logits
    # position j predicts token j+1; only target tokens (and the eos) count
    targets = []
    for i in range(2):
        for j, t in enumerate(batch["labels"][i].tolist()):
            if t != -100:
                targets.append(((i, j - 1), t))
    want = _manual_ce(torch.stack([logits[i, j] for (i, j), _ in targets]),
                      list(enumerate(t for _, t in targets)))  # fmt: skip
    assert loss.item() == pytest.approx(want.item(), rel=1e-5)


def test_seq2seq_loss_hand_checked(tiny_t5):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_t5, input_format="scpn")
    assert m.arch == "seq2seq"
    batch = m.encoder.batch(PAIRS)
    tok = m.tokenizer
    want_in = tok(f"dogs bark <sep> {PAIRS[1].target_parse}")["input_ids"]
    assert batch["input_ids"][1].tolist()[: len(want_in)] == want_in
    lab = tok(text_target="barking dogs")["input_ids"]
    assert batch["labels"][1].tolist()[: len(lab)] == lab
    assert set(batch["labels"][1].tolist()[len(lab) :]) <= {-100}
    m.model.eval()
    with torch.no_grad():
        loss = m.model(**batch).loss
        logits = m.model(**batch).logits
    targets = [((i, j), t) for i in range(2) for j, t in enumerate(batch["labels"][i].tolist())
               if t != -100]  # fmt: skip
    want = _manual_ce(torch.stack([logits[i, j] for (i, j), _ in targets]),
                      list(enumerate(t for _, t in targets)))  # fmt: skip
    assert loss.item() == pytest.approx(want.item(), rel=1e-5)


def test_truncation_is_per_segment_and_counted(tiny_gpt2):
    from paraamr.scpn.module import SCPNModule

    m = SCPNModule(tiny_gpt2, input_format="scpn", max_source_length=3, max_syntax_length=400)
    long = TrainPair("one two three four five six", "x", None, PAIRS[0].target_parse)
    ids = m.encoder.input_ids(m.encoder.segments(long))
    text = m.tokenizer.decode(ids)
    assert text.endswith(PAIRS[0].target_parse + " <para>")  # the parse survives in full
    assert m.encoder.truncated["source"] == 1 and "six" not in text
    # over the model's 128 positions: cut to leave room for the 60-token target, prefix kept
    huge = TrainPair("a b", "x", None, "(ROOT " + "(NP (NN)) " * 40 + ")")
    ids = m.encoder.input_ids(m.encoder.segments(huge))
    assert len(ids) == 128 - 61 and m.encoder.truncated["total"] == 1
    assert m.tokenizer.decode(ids).endswith(" <para>")


# training, resume -----------------------------------------------------------------------------
def _losses(log_dir):
    import csv

    with open(f"{log_dir}/metrics.csv") as fh:
        return [float(r["train/loss"]) for r in csv.DictReader(fh) if r.get("train/loss")]


@pytest.mark.slow
def test_train_saves_plain_transformers_model_and_resumes_exactly(
    scpn_train_cfg, tmp_path, tiny_gpt2, pairs_tsv
):
    from transformers import AutoModelForCausalLM

    from paraamr.scpn.train import train

    # the authors' identity pairs (the paper presets; the offline default has none): 9 + 9
    log1 = ("trainer.log_every_n_steps=1", "data.identity=true")
    straight = train(scpn_train_cfg(tmp_path / "s", tiny_gpt2, pairs_tsv,
                                "trainer.max_steps=4", *log1))  # fmt: skip
    assert straight["steps"] == 4 and straight["num_train_pairs"] == 9 * 2
    assert straight["num_dev_pairs"] == 3 and Path(straight["best_checkpoint"]).exists()
    best = Path(straight["best_model"])
    plain = AutoModelForCausalLM.from_pretrained(best)  # plain transformers loads it
    assert plain.config.model_type == "gpt2"
    meta = json.loads((best / "scpn.json").read_text())
    assert meta["input_format"] == "skeleton" and meta["parser"].startswith("spacy")
    index = json.loads((best / "parse_index.json").read_text())
    assert sum(c for _, c in index["parses"]) == 18  # every training target parse counted
    a = train(scpn_train_cfg(tmp_path / "a", tiny_gpt2, pairs_tsv, *log1))
    last = tmp_path / "a" / "checkpoints" / "last.ckpt"
    r = train(scpn_train_cfg(tmp_path / "a", tiny_gpt2, pairs_tsv,
                         "trainer.max_steps=4", f"resume={last}", *log1))  # fmt: skip
    assert r["steps"] == 4
    assert _losses(a["log_dir"]) == _losses(straight["log_dir"])[:2]
    assert _losses(r["log_dir"]) == pytest.approx(_losses(straight["log_dir"])[2:], rel=1e-6)
    sa = AutoModelForCausalLM.from_pretrained(Path(straight["best_model"])).state_dict()
    sb = AutoModelForCausalLM.from_pretrained(Path(r["best_model"])).state_dict()
    if straight["best_checkpoint"].endswith(Path(r["best_checkpoint"]).name):
        assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_nan_loss_stops_before_any_checkpoint(scpn_train_cfg, tmp_path, tiny_gpt2, pairs_tsv,
                                              monkeypatch):  # fmt: skip
    from paraamr.errors import TrainingError
    from paraamr.scpn.module import SCPNModule
    from paraamr.scpn.train import train

    def nan_step(self, batch, batch_idx):
        return self.model(**batch).loss * float("nan")

    monkeypatch.setattr(SCPNModule, "training_step", nan_step)
    with pytest.raises(TrainingError, match="loss is nan at step 0"):
        train(scpn_train_cfg(tmp_path, tiny_gpt2, pairs_tsv))
    assert not list(tmp_path.rglob("*.ckpt")) and not (tmp_path / "best_model").exists()


# parse generator on real parses ---------------------------------------------------------------
@pytest.fixture(scope="module")
def ptb_parses(data_dir):
    from paraamr.metrics.trees import clean_ptb, parse_many, to_bracketed

    out = []
    for f in sorted((data_dir / "ptb-sample" / "combined").glob("wsj_*.mrg"))[:40]:
        for t in parse_many(f.read_text()):
            c = clean_ptb(t)
            if c is not None:
                out.append(linearize(to_bracketed(c)))
    return out


def test_retrieval_is_the_most_frequent_fitting_parse(ptb_parses):
    from paraamr.scpn.parse_generator import RetrievalParseGenerator, fits, template_of

    gen = RetrievalParseGenerator.from_parses(ptb_parses)
    by_template = Counter(template_of(p) for p in ptb_parses)
    for template, _ in by_template.most_common(5):
        # independent: count the full parses whose depth-3 cut is the template string
        fitting = Counter(p for p in ptb_parses if linearize(p, 3, has_words=False) == template)
        best = max(fitting.values())
        first = next(p for p in ptb_parses if fitting.get(p) == best)
        assert gen.generate(template) == first
        assert fits(gen._ranked[0][0], gen._ranked[0][0])
    # a deeper, uneven template: NP spelled out, VP left open
    p = next(p for p in ptb_parses if p.startswith("(ROOT (S (NP (DT) (NN)) (VP"))
    tpl = "(ROOT (S (NP (DT) (NN)) (VP) (.)))"
    got = gen.generate(tpl)
    assert (
        got is not None and got.startswith("(ROOT (S (NP (DT) (NN)) (VP") and got.endswith("(.)))")
    )
    assert p  # the sample has such trees
    assert gen.generate("(ROOT (S (INTJ) (INTJ) (INTJ) (INTJ)))") is None


def test_retrieval_index_round_trip_and_malformed_template(tmp_path, ptb_parses):
    from paraamr.scpn.parse_generator import RetrievalParseGenerator, TemplateError

    gen = RetrievalParseGenerator.from_parses(ptb_parses)
    gen.save(tmp_path / "i.json")
    again = RetrievalParseGenerator.load(tmp_path / "i.json")
    t = "(ROOT (S (NP) (VP) (.)))"
    assert again.generate(t) == gen.generate(t) and again.counts == gen.counts
    with pytest.raises(TemplateError, match="malformed template"):
        gen.generate("(ROOT (S (NP) (VP) (.))")


def _zss_tree(text: str):
    """A zss tree straight from a word-free bracket string (independent of paraamr's reader)."""
    import zss

    stack, root = [], None
    for tok in text.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            stack.append(None)
        elif tok == ")":
            node = stack.pop()
            if stack:
                stack[-1].addkid(node)
            else:
                root = node
        elif stack[-1] is None:
            stack[-1] = zss.Node(tok)
    return root


def test_retrieval_nearest_template_when_nothing_fits(ptb_parses):
    import zss

    from paraamr.scpn.parse_generator import RetrievalParseGenerator

    tpl = "(ROOT (S (INTJ) (INTJ) (INTJ) (INTJ)))"  # no sample parse has it
    assert RetrievalParseGenerator.from_parses(ptb_parses).generate(tpl) is None  # skip
    gen = RetrievalParseGenerator.from_parses(ptb_parses, no_fit="nearest")
    # independent: depth-3 cut of each parse as a string, unit-cost zss distance, then the most
    # frequent parse (first seen on ties) among those at the smallest distance
    dist = {}
    for p in ptb_parses:
        cut = linearize(p, 3, has_words=False)
        if cut not in dist:
            dist[cut] = int(zss.simple_distance(_zss_tree(cut), _zss_tree(tpl)))
    d = min(dist.values())
    near = Counter(p for p in ptb_parses if dist[linearize(p, 3, has_words=False)] == d)
    best = max(near.values())
    want = next(p for p in ptb_parses if near.get(p) == best)
    assert gen.generate_with_fit(tpl) == (want, f"nearest(ted={d})")
    assert gen.generate(tpl) == want and gen.counts_no_fit == Counter({f"nearest(ted={d})": 2})
    t = "(ROOT (S (NP) (VP) (.)))"  # a template that fits is unchanged, and not counted
    assert gen.generate_with_fit(t) == (RetrievalParseGenerator.from_parses(ptb_parses)
                                        .generate(t), "fit")  # fmt: skip
    assert sum(gen.counts_no_fit.values()) == 2
    with pytest.raises(ParaAMRError, match="no_fit must be one of"):
        RetrievalParseGenerator.from_parses(ptb_parses, no_fit="closest")


def test_seq2seq_parse_generator_pairs_and_fallback(ptb_parses, tiny_gpt2):
    from paraamr.scpn.formats import read_tree
    from paraamr.scpn.module import SCPNModule
    from paraamr.scpn.parse_generator import (
        RetrievalParseGenerator,
        Seq2seqParseGenerator,
        fits,
        parse_generator_pairs,
        template_of,
    )

    pairs = [
        TrainPair("s", "t", a, b) for a, b in zip(ptb_parses[:20], ptb_parses[1:21], strict=True)
    ]
    pg = parse_generator_pairs(pairs)
    assert [p.target for p in pg] == ptb_parses[1:21]
    assert all(p.target_parse == template_of(p.target) for p in pg)
    assert all(fits(read_tree(p.target), read_tree(p.target_parse)) for p in pg)
    m = SCPNModule(tiny_gpt2, input_format="parsegen", max_new_tokens=6, num_beams=1,
                   max_syntax_length=40)  # fmt: skip
    assert m.encoder.segments(pg[0])[1][0] == pg[0].target_parse  # the template, unpruned
    fb = RetrievalParseGenerator.from_parses(ptb_parses)
    gen = Seq2seqParseGenerator(m, fallback=fb)
    t = "(ROOT (S (NP) (VP) (.)))"
    out = gen.generate_many([t, t], ptb_parses[:2])
    # a random tiny model writes no valid tree: each output falls back to retrieval, counted
    assert out == [fb.generate(t)] * 2 and gen.counts["fallback_retrieval"] == 2


# the paraphraser (what users call) ------------------------------------------------------------
T_NPVP = "(ROOT (S (NP) (VP) (.)))"


@pytest.fixture(scope="module")
def tiny_scpn_dir(tmp_path_factory, tiny_gpt2):
    from paraamr.scpn.module import SCPNModule
    from paraamr.scpn.parse_generator import PARSE_INDEX, RetrievalParseGenerator

    d = tmp_path_factory.mktemp("scpn") / "best_model"
    m = SCPNModule(tiny_gpt2, input_format="skeleton", max_new_tokens=5, num_beams=1,
                   max_source_length=12, max_syntax_length=40)  # fmt: skip
    m.save(d)
    parses = ["(ROOT (S (NP (PRP)) (VP (VBD)) (.)))"] * 2 + ["(ROOT (S (VP (VB)) (.)))"]
    RetrievalParseGenerator.from_parses(parses).save(d / PARSE_INDEX)
    return d


def test_paraphraser_bad_input_counted_truncation_flagged_batching_invariant(tiny_scpn_dir):
    from paraamr.corpus.errors import SkipLog
    from paraamr.errors import CorpusFormatError
    from paraamr.scpn.paraphrase import Paraphraser
    from paraamr.scpn.parse_generator import TemplateError

    p = Paraphraser.load(tiny_scpn_dir, batch_size=4)
    long = "one two three four five six seven eight nine ten ."
    sents = ["I slept .", "   ", long, "You ran ."]
    skips = SkipLog("skip")
    rows = p.paraphrase(sents, [T_NPVP, "(ROOT (FRAG))"], skips=skips)
    assert [r["index"] for r in rows] == list(range(8))
    assert [r["skipped"] for r in rows] == [
        None, "no training parse fits the template", "empty sentence", "empty sentence",
        None, "no training parse fits the template", None, "no training parse fits the template",
    ]  # fmt: skip
    assert skips.total == 5 and skips.counts["empty sentence"] == 2
    assert [isinstance(r["output"], str) for r in rows[::2]] == [True, False, True, True]
    assert rows[4]["truncated"] and not rows[0]["truncated"] and p.counts["truncated"] == 1
    assert rows[0]["target_parse"] == "(ROOT (S (NP (PRP)) (VP (VBD)) (.)))"
    one = Paraphraser.load(tiny_scpn_dir, batch_size=1).paraphrase(sents, [T_NPVP])
    assert [r["output"] for r in one] == [r["output"] for r in rows[::2]]  # batched == one by one
    with pytest.raises(CorpusFormatError, match=r"in.txt:2.*empty sentence"):
        p.paraphrase(sents, [T_NPVP], skips=SkipLog("raise"), where="in.txt")
    with pytest.raises(TemplateError, match="malformed template"):
        p.paraphrase(sents, ["(ROOT (S (NP)"])
    assert [r["fit"] for r in rows[:2]] == ["fit", None]
    near = Paraphraser.load(tiny_scpn_dir, batch_size=4, no_fit="nearest")
    rows = near.paraphrase(["I slept ."], [T_NPVP, "(ROOT (FRAG))"])
    # (ROOT (FRAG)) -> nearest index template: (ROOT (S (VP) (.))) at distance 3 (relabel S,
    # insert VP and .) beats (ROOT (S (NP) (VP) (.))) at 4; the row says so and is not skipped
    assert [(r["fit"], r["target_parse"], r["skipped"]) for r in rows] == [
        ("fit", "(ROOT (S (NP (PRP)) (VP (VBD)) (.)))", None),
        ("nearest(ted=3)", "(ROOT (S (VP (VB)) (.)))", None),
    ]
    assert isinstance(rows[1]["output"], str) and near.counts["nearest_template"] == 1


def test_cli_paraphrase_aligned_and_through_the_shard_runner(tiny_scpn_dir, tmp_path, capsys):
    from paraamr.cli import main

    inp = tmp_path / "in.txt"
    inp.write_text("I slept .\n\nYou ran .\n", encoding="utf-8")
    main(["paraphrase", "--model", str(tiny_scpn_dir), "--template", T_NPVP, "--input", str(inp)])
    out = capsys.readouterr()
    lines = out.out.split("\n")[:-1]
    assert len(lines) == 3 and lines[1] == "" and "skipped 1" in out.err
    main(["paraphrase", "--model", str(tiny_scpn_dir), "--template", T_NPVP, "--template",
          "(ROOT (S (VP) (.)))", "--input", str(inp), "--out", str(tmp_path / "o"),
          "--chunk-size", "2"])  # fmt: skip
    out = capsys.readouterr().out.split("\n")[:-1]
    assert len(out) == 6 and out[0].startswith(T_NPVP + "\t")
    rows = [json.loads(x) for x in (tmp_path / "o" / "outputs.jsonl").read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(6)) and [r["line"] for r in rows] == [
        1, 1, 2, 2, 3, 3]  # fmt: skip
    assert out[0].split("\t")[1] == lines[0]  # same output with and without the shard runner
    with pytest.raises(TreeError):
        main(["paraphrase", "--model", str(tiny_scpn_dir), "--template", "(ROOT (S", "--input",
              str(inp), "--debug"])  # fmt: skip


def test_paraphraser_decodes_without_repeats_only_when_asked(tiny_scpn_dir, monkeypatch):
    from paraamr.lms.repeats import RepeatedWordBlocker
    from paraamr.scpn.paraphrase import Paraphraser

    assert Paraphraser.load(tiny_scpn_dir).module.no_repeat_words is None
    p = Paraphraser.load(tiny_scpn_dir, no_repeat_words=3)
    assert p.module.no_repeat_words == 3
    calls = []
    monkeypatch.setattr(RepeatedWordBlocker, "__call__",
                        lambda self, ids, scores: calls.append(self.n) or scores)  # fmt: skip
    p.paraphrase(["I slept ."], [T_NPVP])
    assert calls and set(calls) == {3}  # the block ran at each decoding step


def test_dev_bleu_scores_generations_against_dev_targets():
    import sacrebleu

    from paraamr.scpn.formats import get_format
    from paraamr.scpn.module import DevBleu

    dev = [TrainPair("a b c d", "the cat sat on the mat", None, "(ROOT (S))"),
           TrainPair("e", "a dog ran in the park today", None, "(ROOT (NP))")]  # fmt: skip

    fmt = get_format("scpn")

    class Enc:
        @staticmethod
        def segments(p):
            return fmt.segments(p.source, None, p.target_parse)

    class Fake:  # a fixed output per input, like a model
        encoder = Enc()
        trainer = type("T", (), {"datamodule": type("D", (), {"dev": dev})()})()

        def generate_texts(self, segs, num_beams=None):
            return ["the cat sat on a mat" if s[0][0] == "a b c d" else "a dog ran" for s in segs]

    got = DevBleu(limit=2, batch_size=1)(Fake())
    want = sacrebleu.corpus_bleu(
        ["the cat sat on a mat", "a dog ran"],
        [["the cat sat on the mat", "a dog ran in the park today"]],
    )
    assert got == pytest.approx(want.score)


def test_table7_job_with_the_real_paraphraser_fills_unfit_templates(
    tiny_scpn_dir, compose_config, data_dir, tmp_path
):
    """A Table 7 job through :class:`SCPNParaphraser` and a tiny SCPN model: the index has no
    parse for ``(ROOT (NP (NP) (.)))``, so ``no_fit=skip`` loses that template's candidates and
    ``no_fit=nearest`` (the default) gives them the parse of the nearest template, counted."""
    from tiny_bert import build_tiny_bert

    from paraamr.fewshot.job import run_job
    from paraamr.tables.table7 import gather_rows

    bert = build_tiny_bert(tmp_path / "bert")
    results = {}
    for no_fit in ("skip", "nearest"):
        cfg = compose_config(
            "fewshot", "task=mrpc", "k=4", "augment=scpn", "seed=0", f"paths.data_dir={data_dir}",
            f"model.model_name_or_path={bert}", "trainer.max_epochs=1",
            "logger.wandb.enabled=false", f"out_dir={tmp_path}/{no_fit}", "augment.lm=null",
            f"augment.paraphraser.model={tiny_scpn_dir}", f"augment.paraphraser.no_fit={no_fit}",
            "augment.paraphraser.batch_size=4",
        )  # fmt: skip
        results[no_fit] = run_job(cfg)["augment"]
    skip, near = results["skip"], results["nearest"]
    assert skip["stats"]["candidates"] == near["stats"]["candidates"] == 12  # 4 examples x 3
    assert skip["stats"]["dropped_no_output"] == 4  # the NP template, once per example
    assert skip["paraphraser_counts"]["skipped:no training parse fits the template"] == 4
    assert near["paraphraser_counts"]["nearest_template"] == 4
    assert near["stats"].get("dropped_no_output", 0) == 0
    assert "no_fit=nearest" in near["paraphraser"] and "no_fit" not in skip["paraphraser"]
    rows = gather_rows(
        [json.loads((tmp_path / "nearest" / "results.json").read_text())]
    )  # the table says how many candidates used a neighbouring template
    assert rows[0]["augment_nearest_template"] == 4


def test_paraphraser_takes_a_word_cap_and_keeps_the_models_without_one(tiny_scpn_dir):
    from paraamr.errors import ConfigError
    from paraamr.scpn.paraphrase import Paraphraser

    assert Paraphraser.load(tiny_scpn_dir).module.word_cap is None
    assert Paraphraser.load(tiny_scpn_dir, word_cap=[1.2, 3]).module.word_cap == [1.2, 3.0]
    with pytest.raises(ConfigError, match="ratio > 0"):
        Paraphraser.load(tiny_scpn_dir, word_cap=[0, 3])


def test_model_generator_shows_a_progress_bar_with_a_total(capsys):
    """Table 6's generation (minutes per test set on a CPU) shows a tqdm bar over the
    sentences: its total, so the rate and the ETA, and the outputs stay in input order."""
    from types import SimpleNamespace

    from paraamr.scpn.evaluate import model_generator

    module = SimpleNamespace(
        fmt=SimpleNamespace(segments=lambda s, sp, tp: (s, tp)),
        encoder=SimpleNamespace(input_ids=lambda seg: seg[0].split()),
        generate_texts=lambda batch, beams: [seg[0].upper() for seg in batch],
    )
    sources = ["a b c", "d", "e f", "g h i j", "k"]
    outs = model_generator(module, batch_size=2)(sources, ["(ROOT)"] * 5, [None] * 5)
    assert outs == [s.upper() for s in sources]
    err = capsys.readouterr().err
    assert "generate" in err and "5/5" in err
    model_generator(module, batch_size=2, progress=False)(sources, ["(ROOT)"] * 5, [None] * 5)
    assert "generate" not in capsys.readouterr().err
