"""The metric objects (:mod:`paraamr.metrics.pairwise`) against the libraries they stand for
(nltk, sacrebleu) and hand computations; one object per measure for Table 2, validity and
Table 6."""

from __future__ import annotations

import random
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import sacrebleu
from nltk.translate.bleu_score import sentence_bleu

from paraamr.errors import ConfigError, InputError
from paraamr.metrics.pairwise import Bleu, SelfBleu, Sentence, Similarity, TokenIoU, TreeEdit

pytestmark = pytest.mark.filterwarnings("ignore:\\nThe hypothesis contains 0 counts:UserWarning")

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "under",
    "mat",
    "rug",
    "quickly",
    ".",
    ",",
    "The",
    "Cat",
]


def _sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) for _ in range(n)]


def test_bleu_variants_equal_nltk_and_sacrebleu():
    hyps, refs = _sentences(60, 1), _sentences(60, 2)
    nltk_b, sent, corp = Bleu(), Bleu("sacrebleu-sentence"), Bleu("sacrebleu-corpus")
    for h, r in zip(hyps, refs, strict=True):
        ht, rt = h.split(), r.split()
        assert nltk_b.sentence_score(ht, rt) == pytest.approx(sentence_bleu([rt], ht), abs=1e-12)
        assert nltk_b.sentence_score(Sentence(h, ht), Sentence(r, rt)) == nltk_b.sentence_score(
            ht, rt
        )
        assert sent.sentence_score(h, r) == pytest.approx(
            sacrebleu.sentence_bleu(h, [r]).score / 100
        )
    lib = sacrebleu.BLEU()
    ref = lib.corpus_score(hyps, [refs]).score
    assert corp.sacrebleu_signature() == str(lib.get_signature())
    assert round(100 * corp.corpus_score(hyps, refs).value, 4) == round(ref, 4)
    acc = corp.accumulator()
    for h, r in zip(hyps, refs, strict=True):
        corp.add(acc, h, r)
    assert acc.score() == pytest.approx(ref / 100, abs=1e-12)


def test_lowercase_reaches_every_bleu_variant_and_iou():
    h, r = "The Cat sat .", "the cat sat ."
    assert Bleu("sacrebleu-sentence", lowercase=True).sentence_score(h, r) == pytest.approx(1.0)
    assert Bleu("sacrebleu-sentence").sentence_score(h, r) < 0.9
    assert Bleu(lowercase=True).sentence_score(h.split(), r.split()) == pytest.approx(1.0)
    assert round(Bleu("sacrebleu-corpus", lowercase=True).corpus_score([h], [r]).value, 6) == 1.0
    assert TokenIoU().sentence_score(h.split(), r.split()) == pytest.approx(2 / 6)  # sat . of 6
    assert TokenIoU(lowercase=True).sentence_score(h.split(), r.split()) == 1.0
    assert Bleu(lowercase=True).signature().endswith("case:lower")


def test_bleu_refuses_what_it_cannot_score():
    with pytest.raises(ConfigError, match="metrics.bleu"):
        Bleu("bleu4")
    with pytest.raises(InputError, match="tokens"):
        Bleu().sentence_score("a b", "a b")
    with pytest.raises(InputError, match="Sentence has none"):
        Bleu().sentence_score(Sentence("a b"), Sentence("a b"))
    with pytest.raises(InputError, match="no per-pair value"):
        Bleu("sacrebleu-corpus").sentence_score("a", "a")
    with pytest.raises(InputError, match="2 hypotheses and 1 references"):
        Bleu("sacrebleu-corpus").corpus_score(["a", "b"], ["a"])


TREES = [
    ("(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))"),
    ("(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat))))", "(ROOT (NP (NN cat)))"),
    ("(ROOT (S (NP (PRP I))", "(ROOT (S))"),  # unreadable first tree
]


def test_tree_edit_by_hand_and_the_same_in_a_process_pool():
    ted = TreeEdit()
    got = ted.cut_and_full(TREES)
    # (S (NP PRP) (VP VBP)) vs (S (VP VB) .): relabel NP->VP, PRP->VB, delete the second VP
    # and its VBP, insert "." = 4 (word-free, POS kept)
    assert got[0] == (4, 4)
    assert isinstance(got[2], str)
    with ProcessPoolExecutor(2) as pool:
        assert ted.cut_and_full(TREES * 50, pool, workers=2) == got * 50
    full = TreeEdit(depth=None)
    assert full.signature() == "paraamr-v2,full,unit-cost,words:no,pos:yes,kernel:edist"
    assert (ted.name, full.name) == ("TED-3", "TED-F")
    assert ted.pair_scores(TREES[:2]) == [got[0][0], got[1][0]]
    assert full.pair_scores(TREES[:2]) == [got[0][1], got[1][1]]
    tree = Sentence("I know", ("I", "know"), TREES[0][0]), Sentence("go .", None, TREES[0][1])
    assert ted.sentence_score(*tree) == 4.0
    with pytest.raises(InputError, match="unreadable tree"):
        ted.pair_scores(TREES)
    with pytest.raises(InputError, match="needs a cut depth"):
        full.cut_and_full(TREES[:1])
    with pytest.raises(InputError, match="parse trees"):
        ted.sentence_score(Sentence("no tree"), TREES[0][1])
    with pytest.raises(ConfigError, match="unknown TED variant"):
        TreeEdit("nope")


class _Enc:
    def encode(self, xs, **kw):
        v = np.array([[len(x), x.count("a") + 1.0] for x in xs], dtype=np.float64)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_similarity_is_the_cosine_of_the_encoder():
    pairs = [("aaa", "bb"), ("a", "a")]
    got = Similarity(_Enc(), "fake").pair_scores([(Sentence(a), b) for a, b in pairs])
    e = _Enc().encode(["aaa", "bb"])
    assert got[0] == pytest.approx(float(e[0] @ e[1]), abs=1e-6) and got[1] == pytest.approx(1)
    assert Similarity(None, "m").signature() == "cos(m)"
    with pytest.raises(InputError, match="no encoder"):
        Similarity(None, "m").pair_scores(pairs)
    assert Similarity(None, "m").cosines([]).shape == (0,)  # nothing to score needs no model


def test_self_bleu_in_the_order_drawn_from_the_source_id():
    paras = [s.split() for s in _sentences(3, 7)]
    order = np.random.default_rng(11).permutation(3)
    padded = [paras[k] for k in order] + [paras[k] for k in order][:2]  # 3 -> 5 by repeating
    want = np.mean([sentence_bleu([padded[i]], padded[j]) for i in range(5) for j in range(5)
                    if i != j])  # fmt: skip
    assert SelfBleu().source_score(paras, source_id=11) == pytest.approx(want, abs=1e-12)
    upper = [[t.upper() for t in p] for p in paras]
    assert SelfBleu(lowercase=True).source_score(upper, 11) == pytest.approx(want, abs=1e-12)
    assert SelfBleu().source_score([["A", "b", "c", "d"], ["a", "b", "c", "d"]], 0) < 1.0


def test_table2_signature_fields_are_the_objects_fields_as_before():
    """The Table 2 line as the code wrote it before the metric objects (literal), field by field."""
    from paraamr.metrics.signature import metric_signature

    f = metric_signature(similarity="minilm,openvino", parser_sig="spacy(x)", bleu="nltk-sentence",
                         ted_variant="paraamr", ted_kernel="edist", ted3_depth=2, data="pe",
                         self_bleu=True).fields  # fmt: skip
    assert list(f) == ["paraamr", "data", "agg", "sim", "bleu", "iou", "ted", "selfbleu",
                       "parser", "versions"]  # fmt: skip
    assert f["agg"] == "src-mean,drop-identical:ci" and f["sim"] == "cos(minilm,openvino)"
    assert f["bleu"] == "nltk-sentence,w:uniform4,tok:parser,case:as-written"
    assert f["iou"] == "token-set,tok:parser,case:as-written"
    assert f["ted"] == "paraamr-v2,d3:2,unit-cost,words:no,pos:yes,kernel:edist"
    assert f["selfbleu"] == "nltk-sentence,n:5,pad:repeat,order:rng(source-id),case:as-written"
    low = metric_signature(similarity="m", parser_sig="p", bleu="sacrebleu-corpus",
                           ted_variant="paraamr", ted_kernel="zss", ted3_depth=3, data="d",
                           lowercase=True).fields  # fmt: skip
    assert low["bleu"] == "sacrebleu-corpus,tok:13a,case:lower"
    assert low["iou"] == "token-set,tok:parser,case:lower"
