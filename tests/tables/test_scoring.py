"""The scoring pipeline with the gold parser: values equal the metric functions, NaN never enters
a mean, identical paraphrases are dropped, shards merge to the unsharded result."""

import json
import math

import numpy as np
import pytest

from paraamr.corpus import SkipLog, read_corpus
from paraamr.diversity.scoring import METRICS, MetricConfig, score_records
from paraamr.errors import ConfigError, CorpusFormatError
from paraamr.metrics.lexical import bleu_nltk, token_iou
from paraamr.metrics.ted import tree_edit_distance
from paraamr.metrics.trees import leaves, to_bracketed
from paraamr.parsers.gold import GoldParser
from paraamr.shards import Shard, ShardError, merged_rows, stream_path
from paraamr.tables.table2 import corpus_dir, shard_of, table2_row


class FakeEncoder:
    """Deterministic bag-of-characters embeddings (independent of the metric code)."""

    def encode(self, sents, **kw):
        out = np.zeros((len(sents), 64), dtype=np.float32)
        for i, s in enumerate(sents):
            for ch in s.lower():
                out[i, ord(ch) % 64] += 1
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


@pytest.fixture(scope="module")
def gold_corpus(ptb_trees, tmp_path_factory):
    """Sources and 'paraphrases' are real PTB sentences with their gold trees."""
    trees = [t for t in ptb_trees if 5 <= len(leaves(t)) <= 30][:90]
    path = tmp_path_factory.mktemp("gold") / "gold.jsonl"
    with open(path, "w") as fh:
        for k in range(0, 90, 3):
            s, p1, p2 = trees[k], trees[k + 1], trees[k + 2]
            rec = {
                "text": " ".join(leaves(s)),
                "text_parse": to_bracketed(s),
                "paraphrases": [
                    {"para_text": " ".join(leaves(p1)), "para_parse": to_bracketed(p1)},
                    {"para_text": " ".join(leaves(p2)), "para_parse": to_bracketed(p2)},
                    {"para_text": " ".join(leaves(s)).upper(), "para_parse": to_bracketed(s)},
                ],
            }
            fh.write(json.dumps(rec) + "\n")
    return path


def _stream(out, stream, shard=0, n=1):
    return stream_path(corpus_dir(out, "gold"), Shard(shard, n), stream)


def _score(path, out, cfg=None, shard=0, n=1, on_error="raise"):
    cfg = cfg or MetricConfig()
    skips = SkipLog(on_error)
    recs = shard_of(read_corpus(path, skips=skips), shard, n)
    return score_records(
        recs,
        parser=GoldParser(),
        encoder=FakeEncoder(),
        cfg=cfg,
        out_dir=corpus_dir(out, "gold"),
        shard=Shard(shard, n),
        signature="test",
        skips=skips,
    )


def test_pair_values_equal_metric_functions(gold_corpus, tmp_path):
    res = _score(gold_corpus, tmp_path)
    assert res.n_sources == 30 and res.n_pairs == 60 and res.dropped_identical == 30
    recs = {r.text: r for r in read_corpus(gold_corpus)}
    rows = [
        json.loads(x)
        for x in stream_path(corpus_dir(tmp_path, "gold"), Shard(0, 1), "pairs")
        .read_text()
        .splitlines()
    ]
    for row in rows:
        r = recs[row["source"]]
        p = next(p for p in r.paraphrases if p.text == row["paraphrase"])
        src_tok, para_tok = r.text.split(), p.text.split()
        assert row["one_minus_bleu"] == pytest.approx(1 - bleu_nltk(para_tok, src_tok))
        assert row["one_minus_iou"] == pytest.approx(1 - token_iou(src_tok, para_tok))
        e_src, e_para = FakeEncoder().encode([r.text, p.text])  # the encoder, one at a time
        assert row["similarity"] == pytest.approx(float(e_src @ e_para), abs=1e-6)
        assert row["tedf"] == tree_edit_distance(r.parse, p.parse, kernel="zss")
        assert row["ted3"] == tree_edit_distance(r.parse, p.parse, depth=3, kernel="zss")
    merged = table2_row(tmp_path, "gold")
    src_rows = [
        json.loads(x)
        for x in stream_path(corpus_dir(tmp_path, "gold"), Shard(0, 1), "sources")
        .read_text()
        .splitlines()
    ]
    expect = np.mean(
        [np.mean([x["tedf"] for x in rows if x["source_id"] == s["source_id"]]) for s in src_rows]
    )
    assert merged["tedf"] == pytest.approx(expect, abs=1e-3)
    assert merged["n_sources"] == 30 and merged["n_pairs"] == 60


def test_shards_merge_to_unsharded(gold_corpus, tmp_path):
    one = tmp_path / "one"
    many = tmp_path / "many"
    _score(gold_corpus, one)
    for i in range(3):
        _score(gold_corpus, many, shard=i, n=3)
    a, b = table2_row(one, "gold", 200, seed=3), table2_row(many, "gold", 200, seed=3)
    assert a == b  # every value, the bootstrap intervals (same seed) included
    assert all(f"{m}_ci95" in a for m in METRICS if m != "one_minus_bleu" or a[m] is not None)
    # the files, row by row: the merged shards are the unsharded run's rows in the same order
    for stream in ("pairs", "sources"):
        unsharded = [
            json.loads(x) for x in stream_path(corpus_dir(one, "gold"), Shard(), stream).open()
        ]
        merged = list(merged_rows(corpus_dir(many, "gold"), stream, order_key="source_id"))
        assert merged == unsharded and len(merged) == {"pairs": 60, "sources": 30}[stream]
    ids = sorted(
        json.loads(x)["source_id"]
        for i in range(3)
        for x in stream_path(corpus_dir(many, "gold"), Shard(i, 3), "sources")
        .read_text()
        .splitlines()
    )
    assert ids == list(range(30))


def test_missing_shard_is_an_error(gold_corpus, tmp_path):
    _score(gold_corpus, tmp_path, shard=0, n=2)
    with pytest.raises(ShardError, match=r"shards \[1\] of 2 are missing"):
        table2_row(tmp_path, "gold")


def test_bad_gold_tree_raises_or_is_counted(tmp_path):
    path = tmp_path / "bad.jsonl"
    rows = [
        {
            "text": "A b .",
            "text_parse": "(ROOT (S (NN A) (NN b) (. .)))",
            "paraphrases": [
                {"para_text": "B a .", "para_parse": "(ROOT (S (NN B)"},
                {"para_text": "a B c .", "para_parse": "(ROOT (S (DT a) (NN B) (NN c) (. .)))"},
            ],
        }
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(CorpusFormatError, match=r"bad.jsonl:1: paraphrase 0 not parsed"):
        _score(path, tmp_path / "a")
    res = _score(path, tmp_path / "b", on_error="skip")
    assert res.n_pairs == 1 and sum(res.skips["by_reason"].values()) == 1
    row = table2_row(tmp_path / "b", "gold")
    assert all(math.isfinite(row[k]) for k in ("similarity", "ted3", "tedf"))


def test_corpus_bleu_variant(gold_corpus, tmp_path):
    import sacrebleu

    _score(gold_corpus, tmp_path, cfg=MetricConfig(bleu="sacrebleu-corpus"))
    row = table2_row(tmp_path, "gold")
    hyps, refs = [], []
    for r in read_corpus(gold_corpus):
        for p in r.paraphrases:
            if p.text.lower() != r.text.lower():
                hyps.append(p.text)
                refs.append(r.text)
    expect = 100 * (1 - sacrebleu.corpus_bleu(hyps, [refs]).score / 100)
    assert row["one_minus_bleu"] == pytest.approx(expect, abs=1e-3)


def test_process_pool_gives_same_teds(gold_corpus, tmp_path):
    _score(gold_corpus, tmp_path / "a")
    _score(gold_corpus, tmp_path / "b", cfg=MetricConfig(workers=2))
    a, b = table2_row(tmp_path / "a", "gold"), table2_row(tmp_path / "b", "gold")
    assert (a["ted3"], a["tedf"]) == (b["ted3"], b["tedf"])


def test_workers_auto_is_every_core_given_and_bad_counts_name_the_key():
    import os

    assert MetricConfig(workers="auto").workers == len(os.sched_getaffinity(0))
    for bad in (0, "many"):
        with pytest.raises(ConfigError, match="metrics.workers"):
            MetricConfig(workers=bad)


def test_lowercase_option_changes_lexical_metrics_only(tmp_path):
    path = tmp_path / "c.jsonl"
    src_tree = (
        "(ROOT (S (NP (DT The) (NN Cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
    )
    para_tree = (
        "(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))"
        " (NP (NN today))) (. .)))"
    )
    rec = {
        "text": "The Cat sat on the mat .",
        "text_parse": src_tree,
        "paraphrases": [{"para_text": "the cat sat on the mat today .", "para_parse": para_tree}],
    }
    path.write_text(json.dumps(rec) + "\n")
    _score(path, tmp_path / "a")
    _score(path, tmp_path / "b", cfg=MetricConfig(lowercase=True))
    a, b = table2_row(tmp_path / "a", "gold"), table2_row(tmp_path / "b", "gold")
    assert b["one_minus_iou"] == pytest.approx(100 * (1 - 6 / 7), abs=1e-3)
    assert a["one_minus_iou"] > b["one_minus_iou"] and a["one_minus_bleu"] > b["one_minus_bleu"]
    assert (a["ted3"], a["tedf"], a["similarity"]) == (b["ted3"], b["tedf"], b["similarity"])


@pytest.mark.filterwarnings("ignore:\\s*The hypothesis contains 0 counts")
def test_self_bleu_column_is_the_authors_script_and_off_by_default(gold_corpus, tmp_path):
    from ted_originals import paraamr_script_self_bleu

    _score(gold_corpus, tmp_path / "off")
    assert "self_bleu" not in table2_row(tmp_path / "off", "gold")
    _score(gold_corpus, tmp_path / "on", MetricConfig(self_bleu=True))
    src_rows = [
        json.loads(x) for x in _stream(tmp_path / "on", "sources").read_text().split("\n") if x
    ]
    recs = {r.text: r for r in read_corpus(gold_corpus)}
    for s in src_rows:
        scored = [p.text for p in recs[s["source"]].paraphrases][:2]  # the 3rd equals the source
        order = np.random.default_rng(s["source_id"]).permutation(2)
        assert s["self_bleu"] == paraamr_script_self_bleu([scored[k] for k in order])
    merged = table2_row(tmp_path / "on", "gold")
    assert merged["self_bleu"] == round(100 * np.mean([s["self_bleu"] for s in src_rows]), 4)
    for i in range(3):  # the order comes from the source id: shards give the same values
        _score(gold_corpus, tmp_path / "sh3", MetricConfig(self_bleu=True), shard=i, n=3)
    assert table2_row(tmp_path / "sh3", "gold")["self_bleu"] == merged["self_bleu"]


@pytest.mark.parametrize("depth", [None, -1, 2.5, True, "3"])
def test_ted3_depth_must_be_a_whole_number(depth):
    """``metrics.ted3_depth=null`` would name TED-F in the signature while the column is cut."""
    with pytest.raises(ConfigError, match="metrics.ted3_depth"):
        MetricConfig(ted3_depth=depth)
