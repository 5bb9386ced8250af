"""Human-judgement validity: the reader, correlations (against scipy on the real file), the
split-half ceiling (constructed cases with known answers), ROC/AUC (against scikit-learn and hand
computations), measure alignment and the report."""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import re
from collections import defaultdict

import numpy as np
import pytest

from paraamr.errors import CorpusFormatError
from paraamr.validity.ceiling import half_means, spearman_brown, split_half
from paraamr.validity.correlation import correlate, kendall, rank, spearman
from paraamr.validity.fluency import (
    auc,
    filter_effect,
    keep_threshold,
    roc_curve,
)
from paraamr.validity.judgements import read_generic, read_judgements, read_parabank_eval
from paraamr.validity.run import judged_items

# --- reading ----------------------------------------------------------------------------------


def _independent_items(d):
    """ParaBank-Eval grouped by (ref_id, candidate) with the stdlib csv reader (CSV quoting
    understood by the excel-tab dialect), copies dropped as the issue defines them."""

    def rows(name):
        return csv.DictReader(io.StringIO((d / name).read_text("utf-8")), dialect="excel-tab")

    refs = {r["ref_id"]: r for r in rows("ref.tsv")}
    groups = defaultdict(list)
    for r in rows("candidates.tsv"):
        groups[(r["ref_id"], r["candidate"].strip())].append(r)

    def norm(s):
        return re.sub(r"\s+", " ", s.strip().lower())

    out = {}
    for (ref_id, cand), rows in groups.items():
        if any("0" in r["sys_id"].split() for r in rows):
            continue
        if norm(cand) == norm(refs[ref_id]["ref_sent"]):
            continue
        scores = [float(r["human_score"]) for r in rows if r["human_score"]]
        nll = {" ".join(sorted(r["sys_id"].split(), key=int)): float(r["NLL"]) for r in rows}
        out[(ref_id, cand)] = {
            "human": sum(scores) / len(scores) if scores else None,
            "nll": sum(nll.values()) / len(nll),
            "bucket": int(refs[ref_id]["ref_len"]),
        }
    return out


@pytest.fixture(scope="module")
def pbe(parabank_eval):
    return read_parabank_eval(parabank_eval)


def test_parabank_eval_counts(pbe):
    s = pbe.summary()
    assert (s["judgements"], s["items"], s["sources"]) == (23215, 5550, 400)
    assert s["judgements_without_meaning"] == 403  # gm 0 rows carry no human_score
    assert s["skips"]["total"] == 0
    # CSV quoting undone: '"""Speaking of which,"" Aahz called...' -> '"Speaking of which," ...'
    assert not [i for i in pbe.items if '""' in i.paraphrase or '""' in i.source]
    assert any(i.paraphrase.startswith('"Speaking of which,"') for i in pbe.items)


def test_correlations_match_scipy_on_the_real_file(pbe, parabank_eval):
    from scipy.stats import kendalltau, spearmanr

    ref = _independent_items(parabank_eval)
    items, _ = judged_items(pbe)
    assert {(i.source_id, i.paraphrase) for i in items} == set(ref)
    ok = [i for i in items if ref[(i.source_id, i.paraphrase)]["human"] is not None]
    nll = [i.nll for i in ok]
    human = [i.meaning for i in ok]
    assert human == pytest.approx([ref[(i.source_id, i.paraphrase)]["human"] for i in ok])
    x = [ref[(i.source_id, i.paraphrase)]["nll"] for i in ok]
    src = [i.source_id for i in ok]
    for meth, fn in (("spearman", spearmanr), ("kendall", kendalltau)):
        c = correlate(nll, human, src, meth, n_resamples=100)
        assert c.value == pytest.approx(fn(x, human).statistic, abs=1e-9)
        assert c.lo < c.value < c.hi and c.hi - c.lo < 0.3
        assert (c.n_items, c.n_sources) == (len(ok), 400)
    for b in (5, 10, 20, 40):
        sel = [k for k, i in enumerate(ok) if ref[(i.source_id, i.paraphrase)]["bucket"] == b]
        c = correlate(
            [nll[k] for k in sel], [human[k] for k in sel], [src[k] for k in sel], n_resamples=10
        )
        assert c.value == pytest.approx(
            spearmanr([x[k] for k in sel], [human[k] for k in sel]).statistic, abs=1e-9
        )


def test_rank_and_spearman_match_scipy_with_ties():
    from scipy.stats import kendalltau, rankdata, spearmanr

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 7, 300), rng.integers(0, 5, 300) + rng.integers(0, 7, 300) // 2
    assert rank(x).tolist() == rankdata(x).tolist()
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert kendall(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_bootstrap_resamples_sources_not_pairs():
    # four sources of 50 pairs: in two the measure agrees perfectly with people, in two it is
    # reversed. Overall rho is ~0 and resampling 200 pairs would give a narrow interval (~±0.14);
    # resampling the 4 sources draws e.g. only "agreeing" sources (rho 1) or only reversed ones
    rng = np.random.default_rng(0)
    x = rng.random(200)
    y = np.where(np.arange(200) < 100, x, -x)
    src = np.repeat(["a", "b", "c", "d"], 50)
    c = correlate(x, y, src, n_resamples=300)
    assert abs(c.value) < 0.3 and c.n_sources == 4
    assert c.hi - c.lo > 1.0


def test_vectorised_resamples_equal_scipy_on_the_expanded_data():
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    from paraamr.validity.correlation import bootstrap_indices, source_weights, spearman_resampled
    from paraamr.validity.fluency import auc_resampled

    rng = np.random.default_rng(4)
    src = rng.integers(0, 30, 400).astype(str)
    x, y = np.round(rng.normal(size=400), 1), rng.integers(0, 9, 400).astype(float)
    w = source_weights(src, 25, seed=3)
    idx = bootstrap_indices(src, 25, seed=3)
    assert all((np.bincount(i, minlength=400) == row).all() for i, row in zip(idx, w, strict=True))
    ours = spearman_resampled(x, y, w)
    assert ours == pytest.approx([spearmanr(x[i], y[i]).statistic for i in idx], abs=1e-10)
    lab = y > 4
    aucs = auc_resampled(x, lab, w)
    assert aucs == pytest.approx([roc_auc_score(lab[i], x[i]) for i in idx], abs=1e-10)


GENERIC = (
    "source\tparaphrase\tjudge_score\tfluency\n"
    "A cat sat.\tA cat was sitting.\t80\t2\n"
    "A cat sat.\tA cat was sitting.\t70\t2\n"
    "A cat sat.\tcat sat a\t\t0\n"
    "\n"
    "A cat sat.\tA cat sat.\t100\t2\n"
    "Dogs bark loudly at night.\tAt night dogs bark loudly.\t90\n"
)


def test_generic_layout(tmp_path):
    p = tmp_path / "j.tsv"
    p.write_text(GENERIC)
    js = read_judgements(p)
    by = {i.paraphrase: i for i in js.items}
    assert js.layout == "generic" and len(js.items) == 4
    assert by["A cat was sitting."].meaning == 75.0 and by["A cat was sitting."].fluent
    assert by["cat sat a"].meaning is None and by["cat sat a"].fluency_class == 0
    assert by["A cat sat."].is_copy and not by["cat sat a"].is_copy
    assert (
        by["At night dogs bark loudly."].bucket == 5
        and by["At night dogs bark loudly."].fluent is None
    )
    assert js.counts["no_meaning"] == 1


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("a\tb\n", "expected 3 or 4"),
        ("a\tb\tgood\n", "not a number"),
        ("a\tb\t50\t3\n", "fluency '3'"),
        ("a\t\t50\n", "empty source or paraphrase"),
        ("a\tb\t\n", "empty judge_score"),
        ("a\tb\tnan\n", "not finite"),
    ],
)
def test_generic_bad_rows_name_file_and_line(tmp_path, line, reason):
    p = tmp_path / "bad.tsv"
    p.write_text("x\ty\t1\n" + line)
    with pytest.raises(CorpusFormatError, match=rf"bad.tsv:2: .*{re.escape(reason)}"):
        read_generic(p)
    js = read_generic(p, on_error="skip")
    assert js.skips.total == 1 and len(js.items) == 1


def test_parabank_eval_bad_rows_are_counted(tmp_path, parabank_eval):
    d = tmp_path / "pbe"
    d.mkdir()
    (d / "ref.tsv").write_text((parabank_eval / "ref.tsv").read_text())
    lines = (parabank_eval / "candidates.tsv").read_text().splitlines()[:41]
    good = lines[1].split("\t")

    def row(**kw):
        cols = dict(zip(lines[0].split("\t"), good, strict=True)) | kw
        return "\t".join(cols.values())

    bad = [
        row(ref_id="99999"),
        row(gm="3"),
        row(human_score="", gm="2"),
        row(human_score="101"),
        row(NLL="x"),
        "\t".join(good[:5]),
    ]
    (d / "candidates.tsv").write_text("\n".join(lines + bad) + "\n")
    with pytest.raises(CorpusFormatError, match=r"candidates.tsv:42: unknown ref_id"):
        read_parabank_eval(d)
    js = read_parabank_eval(d, on_error="skip")
    assert js.skips.total == 6 and js.counts["judgements"] == 40
    assert set(js.skips.examples.values()) == {f"{d / 'candidates.tsv'}:{n}" for n in range(42, 48)}
    (d / "candidates.tsv").write_text("a\tb\n")
    with pytest.raises(CorpusFormatError, match=r"candidates.tsv:1: header lacks"):
        read_parabank_eval(d)


# --- the human ceiling --------------------------------------------------------------------------


def test_split_half_is_one_when_every_split_orders_items_alike():
    # item i has judgements 10i, 10i+3 (and 10i+1): whichever judgements a half gets, both
    # halves rank the items 0 < 1 < 2 < ..., so every split gives exactly 1
    lists = [[10 * i, 10 * i + 3] if i % 2 else [10 * i, 10 * i + 3, 10 * i + 1] for i in range(50)]
    for method in ("spearman", "kendall", "pearson"):
        sh = split_half(lists, n_splits=9, seed=4, method=method)
        if method != "pearson":
            assert (sh.r_half, sh.r_full, sh.r_full_lo) == pytest.approx((1.0, 1.0, 1.0), abs=1e-12)
        assert sh.n_items == 50 and sh.judgements_per_item == pytest.approx(2.5)
    assert split_half([[1, 2], [3]], n_splits=3).n_items == 1  # single judgements left out


def test_split_half_recovers_a_known_reliability():
    # true scores N(0, 1), 4 judges each with noise N(0, 1): a 2-judge half has reliability
    # 1 / (1 + 1/2) = 2/3, the 4-judge panel 1 / (1 + 1/4) = 0.8 (classical test theory)
    rng = np.random.default_rng(1)
    true = rng.normal(size=20000)
    judgements = true[:, None] + rng.normal(size=(20000, 4))
    sh = split_half(judgements.tolist(), n_splits=5, method="pearson")
    assert sh.r_half == pytest.approx(2 / 3, abs=0.01)
    assert sh.r_full == pytest.approx(0.8, abs=0.01)
    assert spearman_brown(2 / 3) == pytest.approx(0.8)
    # the halves are bivariate normal with correlation 2/3: Spearman's rho is 6/pi asin(r/2)
    sp = split_half(judgements.tolist(), n_splits=5, method="spearman")
    assert sp.r_half == pytest.approx(6 / math.pi * math.asin(1 / 3), abs=0.01)
    assert sp.r_full == pytest.approx(spearman_brown(sp.r_half), abs=0.005)


def test_half_means_partition_each_items_judgements():
    scores = np.array([1.0, 2.0, 4.0, 10.0, 20.0, 40.0, 80.0])
    item_of = np.array([0, 0, 0, 1, 1, 1, 1])
    for seed in range(5):
        a, b = half_means(scores, item_of, 2, np.random.default_rng(seed))
        # item 0: halves of 1 and 2 judgements, item 1: 2 and 2
        assert a[0] * 1 + b[0] * 2 == pytest.approx(7.0)
        assert a[1] * 2 + b[1] * 2 == pytest.approx(150.0)
        assert a[0] in (1.0, 2.0, 4.0)


# --- fluency ------------------------------------------------------------------------------------


def test_roc_and_auc_match_scikit_learn():
    from sklearn.metrics import roc_auc_score
    from sklearn.metrics import roc_curve as sk_roc

    rng = np.random.default_rng(2)
    y = rng.random(500) < 0.7
    s = np.round(rng.normal(size=500) + y, 1)  # ties
    fpr, tpr, thr = roc_curve(s, y)
    sf, st, sthr = sk_roc(y, s, drop_intermediate=False)
    assert np.allclose(fpr, sf) and np.allclose(tpr, st) and np.allclose(thr[1:], sthr[1:])
    assert auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_thresholds_by_hand():
    ppl = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 15, 200]
    fluent = [True] * 10 + [False, False]
    t90 = keep_threshold([p for p, f in zip(ppl, fluent, strict=True) if f], 0.90)
    assert t90 == 90  # 9 of the 10 fluent values are <= 90
    e = filter_effect(ppl, fluent, t90)
    assert (e.kept_fluent, e.dropped_not_fluent, e.dropped_all) == (0.9, 0.5, 2 / 12)
    assert keep_threshold([5.0], 0.95) == 5.0 and math.isnan(keep_threshold([], 0.9))
    e120 = filter_effect(ppl, fluent, 120)
    assert (e120.kept_fluent, e120.dropped_not_fluent) == (1.0, 0.5)


# --- measures and the report --------------------------------------------------------------------


class _Enc:
    """A fake encoder: a bag-of-letters vector (cosine computable by hand)."""

    def encode(self, xs, **kw):
        v = np.array(
            [[s.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for s in xs], float
        )
        return v / np.linalg.norm(v, axis=1, keepdims=True)


class _Ppl:
    def signature(self):
        return "ppl(len)"

    def perplexities(self, xs, batch_size=None):
        return [float(len(x)) for x in xs]


@pytest.fixture(scope="module")
def spacy_parser():
    from paraamr.parsers import make_parser

    return make_parser("spacy")


def test_measures_are_aligned_and_oriented(tmp_path, spacy_parser):
    from paraamr.validity.measures import compute_measures

    p = tmp_path / "j.tsv"
    p.write_text(
        "the cat sat on the mat.\tthe cat sat on the red mat.\t90\t2\n"
        "Dogs bark.\tThe dogs are barking.\t80\t2\n"
    )
    items = read_generic(p).items
    m = compute_measures(
        items, encoder=_Enc(), parser=spacy_parser, scorer=_Ppl(), similarity_name="bag", data="t"
    )
    v = m.values
    # hand computation, paraphrase as hypothesis against its source (BP = 1, p_n = 7/8, 5/7,
    # 3/6, 2/5); the reverse order would give 0.613
    assert v["bleu"][0] == pytest.approx((7 / 8 * 5 / 7 * 3 / 6 * 2 / 5) ** 0.25)
    assert v["iou"][0] == pytest.approx(6 / 7)
    e = _Enc().encode(["the cat sat on the mat.", "the cat sat on the red mat."])
    assert v["similarity"][0] == pytest.approx(float(e[0] @ e[1]), abs=1e-6)
    assert v["perplexity"].tolist() == [27.0, 21.0]
    assert np.isnan(v["nll"]).all() and v["ted3"][0] >= 0 and v["tedf"][1] > 0
    assert m.source_perplexity == {"the cat sat on the mat.": 23.0, "Dogs bark.": 10.0}
    assert "parser:spacy-projection" in m.signatures["ted3"]
    assert "ppl(len)" in m.signatures["perplexity"]


def test_lowercase_reaches_sacrebleu_as_its_signature_says(tmp_path, spacy_parser):
    """The sacrebleu column's signature said case:lower under lowercase=True while the text was
    scored as written; one Bleu object now does both."""
    import sacrebleu

    from paraamr.validity.measures import compute_measures

    p = tmp_path / "j.tsv"
    p.write_text("The Cat sat on the mat.\tthe cat sat on the red mat.\t90\t2\n")
    items = read_generic(p).items
    m = compute_measures(items, encoder=_Enc(), parser=spacy_parser, similarity_name="bag",
                         data="t", lowercase=True)  # fmt: skip
    want = sacrebleu.sentence_bleu("the cat sat on the red mat.", ["the cat sat on the mat."])
    assert m.values["bleu_sacrebleu"][0] == pytest.approx(want.score / 100)
    assert "case:lower" in m.signatures["bleu_sacrebleu"]


def test_report_from_the_real_file_without_models(pbe, tmp_path, spacy_parser):
    from paraamr.validity.analyse import analyse
    from paraamr.validity.measures import compute_measures
    from paraamr.validity.report import write_report

    items, _ = judged_items(pbe, limit=6)
    m = compute_measures(
        items,
        encoder=_Enc(),
        parser=spacy_parser,
        scorer=_Ppl(),
        similarity_name="bag",
        data=pbe.describe(),
    )
    res = analyse(items, m, n_boot=10, n_splits=3)
    res.update(
        data={**pbe.summary(), "copies_excluded": 0, "description": "d"},
        signatures=m.signatures,
        config={"similarity": {"name": "bag"}, "perplexity": {"model": "len"}},
    )
    paths = write_report(res, items, m, tmp_path)
    j = json.loads(paths["json"].read_text())
    assert set(j["meaning"]) == {
        "similarity",
        "bleu",
        "bleu_sacrebleu",
        "iou",
        "ted3",
        "tedf",
        "perplexity",
        "nll",
    }
    assert j["meaning"]["nll"]["all"]["spearman"]["n_items"] == res["n_items_with_meaning"]
    assert [t["threshold"] for t in j["fluency"]["paper_thresholds"]] == [120, 110, 85]
    md = paths["md"].read_text()
    assert "GPT-2 perplexities" in md and "human ceiling" in md
    # the report says when and on what CPU it was measured
    from paraamr.utils import cpu_model

    assert j["measured"]["date"] == datetime.date.today().isoformat()
    assert j["measured"]["cpu"] == cpu_model()
    assert f"Measured {j['measured']['date']} on {cpu_model()}" in md
    for k in ("metric_vs_human", "correlations", "roc", "perplexity_hist"):
        assert paths[k].stat().st_size > 1000
    rows = paths["pairs"].read_text().splitlines()
    assert len(rows) == len(items) + 1


@pytest.mark.slow
def test_make_validity_entry_point_small(tmp_path, compose_config, monkeypatch):
    """The Hydra config end to end on 3 sources with a tiny LM, W&B offline."""
    from paraamr.testing.tiny_models import build_tiny_causal_lm
    from paraamr.validity.run import run_validity

    monkeypatch.setenv("WANDB_MODE", "offline")
    lm = build_tiny_causal_lm(tmp_path / "lm")
    cfg = compose_config(
        "validity",
        "limit=3",
        f"perplexity.model={lm}",
        f"perplexity.cache={tmp_path / 'cache'}",
        "n_boot=20",
        "n_splits=5",
        f"out_dir={tmp_path / 'out'}",
    )
    res = run_validity(cfg)
    assert res["perplexity_cache"]["sentences_scored"] > 0
    assert list((tmp_path / "out" / "wandb").glob("offline-run-*/files/media/table/*.table.json"))
    again = run_validity(cfg)
    assert again["perplexity_cache"]["sentences_scored"] == 0
    # compared as JSON: NaN (an empty bucket's interval) must equal NaN
    dump = lambda x: json.dumps(x, sort_keys=True)  # noqa: E731
    assert dump(again["meaning"]["perplexity"]) == dump(res["meaning"]["perplexity"])


def test_every_measure_signature_reads_back_as_fields():
    """Each signature is a Signature whose fields parse (a bare ``ppl(...)`` part did not)."""
    from paraamr.signature import Signature
    from paraamr.validity.measures import measure_signatures

    sigs = measure_signatures(data="d", similarity="minilm", parser_sig="p", lm_sig="ppl(x,y)")
    for name, sig in sigs.items():
        if name.startswith("_"):
            continue
        fields = Signature(sig).fields
        assert fields["paraamr"] and fields["data"] == "d", name
    assert Signature(sigs["perplexity"]).fields["lm"] == "ppl(x,y)"
    assert Signature(sigs["ted3"]).fields["parser"] == "p"
