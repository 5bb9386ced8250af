"""The acceptable-similarity calibration: the logistic fit against scikit-learn's, the verdicts
by hand, the bootstrap over sources, the share of pairs by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paraamr.errors import InputError
from paraamr.validity.acceptable import (
    AcceptableThreshold,
    acceptable_shares,
    calibrate,
    calibrate_parabank_eval,
    half_way,
    judged_pairs,
    logistic_fit,
)
from paraamr.validity.judgements import Item, Judgement


def _noisy(n: int = 600, mid: float = 0.6, slope: float = 12.0, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, n)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-slope * (x - mid)))).astype(np.int8)
    return x, y


def test_logistic_fit_equals_sklearn_unpenalised():
    from sklearn.linear_model import LogisticRegression

    x, y = _noisy()
    b0, b1 = logistic_fit(x, y)
    ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x[:, None], y)
    assert b0 == pytest.approx(ref.intercept_[0], rel=1e-5)
    assert b1 == pytest.approx(ref.coef_[0, 0], rel=1e-5)
    assert half_way(x, y) == pytest.approx(-ref.intercept_[0] / ref.coef_[0, 0], rel=1e-5)


def test_half_way_of_a_symmetric_sample_is_its_centre():
    # mirror image about 0.4: the likelihood is symmetric, so sigma(b0 + b1 * 0.4) = 1/2
    x = np.array([0.1, 0.2, 0.3, 0.35, 0.45, 0.5, 0.6, 0.7])
    y = np.array([0, 0, 1, 0, 1, 0, 1, 1])
    assert half_way(x, y) == pytest.approx(0.4, abs=1e-9)


@pytest.mark.parametrize(
    "x, y, what",
    [
        ([0.1, 0.2, 0.3], [1, 1, 1], "one class"),
        ([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], "separated"),
        ([0.1, 0.2, 0.3, 0.8, 0.9, 0.95], [1, 1, 0, 1, 0, 0], "do not rise"),
    ],
)
def test_half_way_refuses_what_has_no_half_way_point(x, y, what):
    with pytest.raises(InputError, match=what):
        half_way(np.array(x), np.array(y))


def _item(src_id, para, scores, systems=("3",)):
    js = [Judgement(s, 0 if s is None else 2, f"w{k}", k + 2) for k, s in enumerate(scores)]
    return Item(src_id, f"source {src_id}", para, 5, "f", 1, set(systems), judgements=js)


def test_judged_pairs_verdicts_by_hand():
    items = [
        _item("1", "p1", [70, 69.9, None]),  # at the cut, under it, nonsensical
        _item("1", "source 1", [100]),  # equal to its source: a copy, left out
        _item("2", "p2", [95], systems=("0",)),  # sys_id 0: a copy, left out
        _item("2", "p3", [10, 90]),
    ]
    d = judged_pairs(items, judge_cut=70)
    assert d["pairs"] == [("source 1", "p1"), ("source 2", "p3")]
    assert d["item"].tolist() == [0, 0, 0, 1, 1]
    assert d["verdict"].tolist() == [1, 0, 0, 0, 1]
    assert d["source"] == ["1", "2"]


def test_calibrate_bootstraps_over_sources():
    """The interval resamples whole sources (their pairs and every judgement of them), here
    redone by hand: 60 sources of 4 pairs, 2 judgements a pair."""
    x, y = _noisy(n=480, seed=3)
    pairs = x[::2]  # pair k's cosine; judgements 2k and 2k+1 are of pair k
    judged = {
        "pairs": [("s", f"p{i}") for i in range(len(pairs))],
        "source": [str(i // 4) for i in range(len(pairs))],
        "item": np.repeat(np.arange(len(pairs)), 2),
        "verdict": y,
    }
    r = calibrate(pairs, judged, judge_cut=70, encoder="e", data="d", bootstrap=60, seed=0)
    assert r.threshold == pytest.approx(half_way(np.repeat(pairs, 2), y), abs=1e-6)
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(60):
        pick = rng.integers(0, 60, size=60)
        rows = [j for s in pick for j in range(8 * s, 8 * s + 8)]  # source s: judgements 8s..
        draws.append(half_way(np.repeat(pairs, 2)[rows], y[rows]))
    assert r.ci95 == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)), abs=1e-6)
    assert r.draws == 60 and r.signature().endswith("boot:60/60")
    assert (r.n_pairs, r.n_judgements, r.n_sources, r.n_preserving) == (240, 480, 60, y.sum())
    assert r.signature().startswith(f"acceptable:sim>={r.threshold:.3f}[")
    assert AcceptableThreshold.from_json(json.loads(json.dumps(r.to_json()))) == r


def test_acceptable_share_and_interval_by_hand():
    sim = np.array([0.9, 0.2, 0.8, 0.75, 0.1, 0.7])
    src = np.array([5, 5, 7, 9, 9, 9])
    share, ci = acceptable_shares(sim, src, 0.75)
    assert share == pytest.approx(3 / 6) and ci is None
    # the interval: every resample of sources gives the ratio of accepted pairs to pairs in
    # the resampled sources (not the mean of the sources' shares); 8 sources of 1-5 pairs
    rng = np.random.default_rng(4)
    sizes = [1, 5, 2, 4, 3, 1, 5, 2]
    src = np.repeat(np.arange(8), sizes)
    sim = rng.uniform(0, 1, src.size)
    share, ci = acceptable_shares(sim, src, 0.6, bootstrap=500, seed=0)
    per_source = [(int((sim[src == k] >= 0.6).sum()), int((src == k).sum())) for k in range(8)]
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(500):
        pick = np.bincount(rng.integers(0, 8, size=8), minlength=8)
        hits = sum(w * h for w, (h, _) in zip(pick, per_source, strict=True))
        n = sum(w * m for w, (_, m) in zip(pick, per_source, strict=True))
        draws.append(hits / n)
    assert share == pytest.approx(sum(h for h, _ in per_source) / src.size)
    assert ci == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))


class _Fake:
    """An encoder whose cosine is the paraphrase's number (``"0.8"`` -> 0.8 against its
    source): unit vectors at that cosine to the source's (1, 0)."""

    def encode(self, xs, **kw):
        out = []
        for s in xs:
            c = float(s) if s[0].isdigit() else 1.0
            out.append([c, (1 - c * c) ** 0.5])
        return np.array(out)


def _judgement_folder(tmp_path):
    """A ParaBank-Eval folder whose paraphrases are their own cosines under :class:`_Fake`."""
    d = tmp_path / "paraphrase" / "parabank-eval"
    d.mkdir(parents=True)
    (d / "ref.tsv").write_text("ref_id\tref_sent\tref_len\n1\tA cat sat.\t5\n2\tA dog ran.\t5\n")
    rows = ["worker_id_anon\tref_id\tref_len\tsys_id\tcandidate\tNLL\thuman_score\tgm"]
    x, y = _noisy(n=120, seed=5)
    for k, (xi, yi) in enumerate(zip(x, y, strict=True)):
        rows.append(f"w{k}\t{1 + k % 2}\t5\t3\t{xi:.6f}\t0.5\t{90 if yi else 20}\t2")
    (d / "candidates.tsv").write_text("\n".join(rows) + "\n")
    return x, y


def test_calibrate_parabank_eval_caches_by_settings(tmp_path):
    x, y = _judgement_folder(tmp_path)
    cache = tmp_path / "acc.json"
    r = calibrate_parabank_eval(tmp_path, _Fake(), "fake", bootstrap=20, cache=cache)
    assert r.threshold == pytest.approx(half_way(np.round(x, 6), y), abs=1e-5)
    assert r.n_judgements == 120 and r.n_sources == 2
    # the cache is used when the settings match (the file edited: the edit comes back) ...
    edited = {**json.loads(cache.read_text()), "threshold": 0.123}
    cache.write_text(json.dumps(edited))
    assert (
        calibrate_parabank_eval(tmp_path, _Fake(), "fake", bootstrap=20, cache=cache).threshold
        == 0.123
    )
    # ... and remade when they do not
    again = calibrate_parabank_eval(
        tmp_path, _Fake(), "fake", judge_cut=60, bootstrap=20, cache=cache
    )
    assert again.threshold == pytest.approx(r.threshold, abs=1e-5) and again.judge_cut == 60


def test_the_builder_filter_at_the_acceptable_similarity(tmp_path, compose_config):
    """``filter.min_similarity=acceptable`` is the calibrated cosine of the build's encoder,
    made once per machine (the cache folder) and reused."""
    from paraamr.builder.run import _acceptable_floor
    from paraamr.metrics.pairwise import Similarity

    x, y = _judgement_folder(tmp_path)
    cfg = compose_config(
        "build",
        "input=x.txt",
        f"paths.data_dir={tmp_path}",
        f"paths.cache_dir={tmp_path}/cache",
        "filter.min_similarity=acceptable",
    )
    floor = _acceptable_floor(cfg, Similarity(_Fake(), "fake"))
    assert floor == pytest.approx(half_way(np.round(x, 6), y), abs=1e-5)
    cached = list((tmp_path / "cache" / "acceptable").glob("*.json"))
    assert len(cached) == 1
    # reused: an edit of the cached file comes back ...
    cached[0].write_text(json.dumps({**json.loads(cached[0].read_text()), "threshold": 0.321}))
    assert _acceptable_floor(cfg, Similarity(_Fake(), "fake")) == 0.321
    # ... until the judgements change (a score edited in place: the same size)
    cands = tmp_path / "paraphrase" / "parabank-eval" / "candidates.tsv"
    text = cands.read_text()
    cands.write_text(text.replace("\t90\t2\n", "\t91\t2\n", 1))
    assert len(text) == len(cands.read_text())
    assert _acceptable_floor(cfg, Similarity(_Fake(), "fake")) == pytest.approx(floor, abs=1e-5)
    with pytest.raises(Exception, match="needs a similarity encoder"):
        _acceptable_floor(cfg, None)
