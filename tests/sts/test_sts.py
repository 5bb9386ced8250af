"""STS readers and evaluator (SentEval "all" setting) on the real STS12-16, STS-B, SICK-R files."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from paraamr.errors import CorpusFormatError
from paraamr.sts import (
    STSB_DEV,
    StsSet,
    evaluate_sts,
    load_sts_suite,
    markdown_table,
    read_original_year,
    read_senteval_year,
    read_sickr,
    read_stsb,
    sts_signature,
)

ROOT = Path(__file__).resolve().parents[2]
YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")
SENTEVAL_PAIRS = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186}


@pytest.fixture(scope="module")
def suite(data_dir) -> dict[str, StsSet]:
    return load_sts_suite(data_dir, "senteval")


# ----------------------------------------------------------------------------- fake encoder


@functools.cache
def _word_vec(word: str, dim: int = 32) -> np.ndarray:
    seed = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
    return np.random.default_rng(seed).standard_normal(dim)


def _hash_vec(sentence: str) -> np.ndarray:
    """Deterministic sum of hash-seeded random word vectors (independent of the package)."""
    return sum((_word_vec(w) for w in sentence.lower().split()), np.zeros(32))


class HashEncoder:
    """sentence-transformers-like ``encode`` that records its calls; does NOT normalise."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, sentences, batch_size=32, convert_to_numpy=True, normalize_embeddings=False):
        self.calls.append(list(sentences))
        return np.stack([_hash_vec(s) for s in sentences]) if sentences else np.zeros((0, 32))


def _cos(a: str, b: str) -> float:
    va, vb = _hash_vec(a), _hash_vec(b)
    na, nb = np.linalg.norm(va), np.linalg.norm(vb)
    return float(va @ vb / (na * nb)) if na and nb else 0.0


# ----------------------------------------------------------------------------- readers, real data


def _raw_counts(year_dir: Path) -> tuple[int, int]:
    """(scored, blank) pairs counted straight from the STS.gs files that have an input file."""
    scored = blank = 0
    for gs in year_dir.glob("STS.gs.*.txt"):
        if (
            gs.name == "STS.gs.ALL.txt"
            or not (year_dir / gs.name.replace(".gs.", ".input.")).exists()
        ):
            continue
        lines = gs.read_text(encoding="utf-8").splitlines()
        blank += sum(1 for x in lines if not x.strip())
        scored += sum(1 for x in lines if x.strip())
    return scored, blank


def test_senteval_layout_counts_match_the_files_and_senteval(data_dir, suite):
    for y in YEARS:
        scored, blank = _raw_counts(data_dir / "sts" / "senteval-layout" / f"{y}-en-test")
        assert (suite[y].n, suite[y].skipped) == (scored, blank) == (SENTEVAL_PAIRS[y], blank)
    assert sum(suite[y].n for y in YEARS) == 12_544
    assert suite["STS15"].skipped > 0 and suite["STS16"].skipped > 0
    assert suite["STS12"].skipped == suite["STS13"].skipped == suite["STS14"].skipped == 0
    assert "MSRvid" in suite["STS12"].subsets
    assert set(suite["STS13"].subsets) == {"FNWN", "OnWN", "headlines"}  # SMT: gold only
    for s in suite.values():
        for s1, s2, g in s.subsets.values():
            assert len(s1) == len(s2) == len(g) and np.isfinite(g).all()
    first = suite["STS12"].subsets["MSRpar"]
    raw = (data_dir / "sts/senteval-layout/STS12-en-test/STS.input.MSRpar.txt").read_text()
    a, b = raw.splitlines()[0].split("\t")
    assert (first[0][0], first[1][0], first[2][0]) == (
        " ".join(a.split()),
        " ".join(b.split()),
        4.4,
    )


def test_stsb_dev_and_sickr(suite):
    assert list(suite) == [*YEARS, STSB_DEV, "SICKRelatedness"]
    assert suite[STSB_DEV].n == 1500 and suite["SICKRelatedness"].n == 4927
    g = suite["SICKRelatedness"].subsets["SICK-R"][2]
    assert g.min() >= 1 and g.max() <= 5
    s1, s2, g = suite[STSB_DEV].subsets["STS-B"]
    assert (s1[0], s2[0], g[0]) == (
        "A man with a hard hat is dancing.",
        "A man wearing a hard hat is dancing.",
        5.0,
    )


def test_original_layout_aligns_with_senteval_layout(data_dir, suite):
    orig = load_sts_suite(data_dir, "original", include=YEARS)
    assert "MSRvid" not in orig["STS12"].subsets and orig["STS12"].n == 3108 - 750
    for y in ("STS13", "STS14", "STS15", "STS16"):
        assert (orig[y].n, orig[y].skipped) == (suite[y].n, suite[y].skipped)
        for task, (s1, _, g) in orig[y].subsets.items():
            e1, _, eg = suite[y].subsets[task]
            np.testing.assert_array_equal(g, eg)  # same gold, same order: no shifted alignment
            assert len(s1) == len(e1)
    assert any(s != s.lower() for s1, _, _ in orig["STS14"].subsets.values() for s in s1), (
        "original layout should keep casing"
    )


# ----------------------------------------------------------------------------- bad input


def _senteval_dir(tmp_path: Path, inputs: str, golds: str, task: str = "t") -> Path:
    d = tmp_path / "STS99-en-test"
    d.mkdir(exist_ok=True)
    (d / f"STS.input.{task}.txt").write_text(inputs, encoding="utf-8")
    (d / f"STS.gs.{task}.txt").write_text(golds, encoding="utf-8")
    return d


def test_blank_gold_is_skipped_and_counted(tmp_path):
    d = _senteval_dir(tmp_path, "a b\tc\nd\te\nf\tg\n", "1.5\n\n  \n")
    s = read_senteval_year(d)
    assert s.name == "STS99" and (s.n, s.skipped) == (1, 2)
    s1, s2, g = s.subsets["t"]
    assert (s1, s2, g.tolist()) == (["a b"], ["c"], [1.5])


def test_mismatched_line_counts_name_both_files(tmp_path):
    d = _senteval_dir(tmp_path, "a\tb\nc\td\n", "1\n2\n3\n")
    with pytest.raises(CorpusFormatError) as e:
        read_senteval_year(d)
    msg = str(e.value)
    assert "STS.input.t.txt" in msg and "STS.gs.t.txt" in msg and "2 lines" in msg and "3" in msg


@pytest.mark.parametrize("bad", ["a b c", "a\tb\tc", "a\t  "])
def test_line_without_two_sentences_names_file_and_line(tmp_path, bad):
    d = _senteval_dir(tmp_path, f"x\ty\n{bad}\n", "1\n2\n")
    with pytest.raises(CorpusFormatError) as e:
        read_senteval_year(d)
    assert e.value.line == 2 and e.value.path.endswith("STS.input.t.txt")


def test_non_numeric_gold_names_file_and_line(tmp_path):
    d = _senteval_dir(tmp_path, "x\ty\nz\tw\n", "1\nfive\n")
    with pytest.raises(CorpusFormatError, match="five") as e:
        read_senteval_year(d)
    assert e.value.line == 2 and e.value.path.endswith("STS.gs.t.txt")


def test_original_layout_errors_and_blank_scores(tmp_path):
    d = tmp_path / "2013"
    d.mkdir()
    (d / "x.test.tsv").write_text("4\ta\tb\n\tc\td\n", encoding="utf-8")
    (d / "LICENSE.txt").write_text("ignored")
    (d / "x.train.tsv").write_text("not\tread")
    s = read_original_year(d)
    assert (s.name, s.n, s.skipped, list(s.subsets)) == ("STS13", 1, 1, ["x"])
    (d / "y.test.tsv").write_text("4\ta\tb\n3\tonly one\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as e:
        read_original_year(d)
    assert e.value.line == 2 and e.value.path.endswith("y.test.tsv")


def test_header_files_errors(tmp_path):
    f = tmp_path / "sick.txt"
    f.write_text("pair_ID\tsentence_A\tsentence_B\trelatedness_score\n1\ta\tb\t4.5\n2\tc\td\tx\n")
    with pytest.raises(CorpusFormatError) as e:
        read_sickr(f)
    assert e.value.line == 3
    g = tmp_path / "stsb.tsv"
    g.write_text("sentence1\tsentence2\tscore\na\tb\t1\nc\td\n")
    with pytest.raises(CorpusFormatError) as e:
        read_stsb(g)
    assert e.value.line == 3


# ----------------------------------------------------------------------------- evaluator


def test_evaluator_matches_scipy_on_real_files_all_setting(suite):
    sub = {y: suite[y] for y in ("STS13", "STS16")}
    enc = HashEncoder()
    res = evaluate_sts(enc, sub, batch_size=7)
    for y, s in sub.items():
        sims, gold, per_task = [], [], []
        for s1, s2, g in s.subsets.values():
            t = [_cos(a, b) for a, b in zip(s1, s2, strict=True)]
            sims += t
            gold += list(g)
            per_task.append(stats.spearmanr(t, g)[0] * 100)
        got = res["years"][y]
        assert got["n"] == s.n == len(gold)
        # tolerance: pairs of identical sentences have cosine 1 +- 1e-16, and how those
        # rounding-level differences break ties moves Spearman by ~1e-4; a shifted alignment
        # or a mean over subsets would move it by whole points
        assert got["spearman"] == pytest.approx(stats.spearmanr(sims, gold)[0] * 100, abs=1e-3)
        assert got["pearson"] == pytest.approx(stats.pearsonr(sims, gold)[0] * 100, abs=1e-6)
        for (task, r), ref in zip(res["subsets"][y].items(), per_task, strict=True):
            assert r["spearman"] == pytest.approx(ref, abs=1e-3), task
    assert res["avg"]["tasks"] == ["STS13", "STS16"] and "avg_7" not in res
    assert res["avg"]["spearman"] == pytest.approx(
        np.mean([res["years"][y]["spearman"] for y in sub])
    )


def test_each_distinct_sentence_encoded_once_and_averages(suite):
    enc = HashEncoder()
    res = evaluate_sts(enc, suite)
    every = [x for s in suite.values() for x in s.sentences()]
    assert len(enc.calls) == 1
    assert len(enc.calls[0]) == len(set(enc.calls[0])) == len(set(every)) == res["n_sentences"]
    assert len(every) > len(set(every))  # the suite does repeat sentences
    sp = {n: r["spearman"] for n, r in res["years"].items()}
    assert res["avg"]["spearman"] == pytest.approx(np.mean([sp[y] for y in YEARS]))
    assert res["avg_7"]["tasks"] == [*YEARS, STSB_DEV, "SICKRelatedness"]
    assert res["avg_7"]["spearman"] == pytest.approx(np.mean(list(sp.values())))
    assert res["years"]["STS16"]["skipped"] == suite["STS16"].skipped
    table = markdown_table(res)
    assert "| Spearman |" in table and "avg_7" in table
    sig = sts_signature("hash", suite)
    assert "model:hash" in sig and "senteval=STS12" in sig and "spearman-all-setting" in sig


class TableEncoder:
    """Returns fixed 2-d vectors looked up by sentence."""

    def __init__(self, vecs: dict[str, tuple[float, float]]) -> None:
        self.vecs = vecs

    def encode(self, sentences, batch_size=32, convert_to_numpy=True, normalize_embeddings=True):
        return np.array([self.vecs[s] for s in sentences], dtype=np.float64)


def test_all_setting_is_the_concatenation_not_the_mean_of_subsets():
    # angles -> cosines with "o": a 1.0, b 0.8, c 0.6, d 0.0
    vecs = {"o": (1, 0), "a": (1, 0), "b": (0.8, 0.6), "c": (0.6, 0.8), "d": (0, 1)}
    # each subset is perfectly ranked on its own (Spearman 100), but their scales disagree
    s = StsSet(
        "STS12",
        {
            "x": (["o", "o"], ["a", "b"], np.array([5.0, 4.0])),
            "y": (["o", "o"], ["c", "d"], np.array([4.5, 4.2])),
        },
        "mem",
    )
    r = evaluate_sts(TableEncoder(vecs), {"STS12": s})
    assert [v["spearman"] for v in r["subsets"]["STS12"].values()] == pytest.approx([100, 100])
    sims, gold = [1.0, 0.8, 0.6, 0.0], [5.0, 4.0, 4.5, 4.2]
    assert r["years"]["STS12"]["spearman"] == pytest.approx(stats.spearmanr(sims, gold)[0] * 100)
    assert r["years"]["STS12"]["spearman"] == pytest.approx(40.0)
    assert r["years"]["STS12"]["pearson"] == pytest.approx(stats.pearsonr(sims, gold)[0] * 100)


def test_degenerate_subset_gives_nan_not_a_crash():
    s = StsSet("STS12", {"t": (["a", "b"], ["a", "b"], np.array([3.0, 3.0]))}, "mem")
    r = evaluate_sts(HashEncoder(), {"STS12": s})
    assert np.isnan(r["years"]["STS12"]["spearman"])


def test_real_minilm_on_sts12_sample(minilm, suite):
    sts12 = suite["STS12"]
    sample = {t: (a[:100], b[:100], g[:100]) for t, (a, b, g) in sts12.subsets.items()}
    res = evaluate_sts(minilm, {"STS12": StsSet("STS12", sample, sts12.source)}, batch_size=64)
    assert res["years"]["STS12"]["n"] == 500
    assert res["years"]["STS12"]["spearman"] > 60


def test_hub_loader_without_datasets_says_what_to_do(monkeypatch):
    import sys

    from paraamr.errors import MissingDependencyError, ParaAMRError
    from paraamr.fewshot.data import read_hub
    from paraamr.sts import load_hub

    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    with pytest.raises(MissingDependencyError, match=r"layout=hub .*install paraamr\[online\]"):
        load_hub("STS12")
    with pytest.raises(ParaAMRError, match=r"^source=hub .*make setup ONLINE=1"):
        read_hub("mrpc", "train")  # one line from every CLI and Hydra entry point


@pytest.mark.slow
def test_hydra_entry_writes_sts_json(tmp_path, data_dir, suite, minilm):
    """The entry point with the real offline MiniLM it names (no stand-in), checked against
    sentence-transformers + scipy on the same pairs."""
    from hydra import compose, initialize_config_dir

    spec = importlib.util.spec_from_file_location("sts_entry", ROOT / "experiments" / "sts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(
            "sts",
            # encoder= as `make sts MODEL=...` passes it (a key, not the model/ config group)
            overrides=[
                f"out_dir={tmp_path}",
                f"paths.data_dir={data_dir}",
                "include=[STS13]",
                "encoder=minilm",
            ],
        )
    mod.main(cfg)
    out = json.loads((tmp_path / "sts.json").read_text())
    assert out["model"] == "minilm" and re.search(r"metric:spearman-all-setting", out["signature"])
    assert out["years"]["STS13"]["n"] == 1500 and "spearman" in out["avg"]
    assert out["counts"]["STS13"]["pairs"] == 1500
    a = [x for t in suite["STS13"].subsets.values() for x in t[0]]
    b = [x for t in suite["STS13"].subsets.values() for x in t[1]]
    gold = np.concatenate([t[2] for t in suite["STS13"].subsets.values()])
    ea, eb = (minilm.encode(x, batch_size=64, normalize_embeddings=True) for x in (a, b))
    expect = stats.spearmanr((ea * eb).sum(1), gold)[0] * 100  # SentEval "all": pooled pairs
    assert out["years"]["STS13"]["spearman"] == pytest.approx(expect, abs=0.05)


def test_evaluation_asks_the_encoder_for_its_progress_bar():
    """The STS suite of a large model takes minutes to encode: ``progress=True`` turns on the
    encoder's progress bar (sentence-transformers' tqdm over the batches, with total and ETA),
    and the default leaves it off (the STS-B dev score during training)."""

    class Recording(HashEncoder):
        def encode(self, sentences, batch_size=32, show_progress_bar=False, **kw):
            self.bars = [*getattr(self, "bars", []), show_progress_bar]
            return super().encode(sentences, batch_size)

    s = StsSet("STS12", {"t": (["a b", "c"], ["a", "c d"], np.array([4.0, 1.0]))}, "")
    enc = Recording()
    evaluate_sts(enc, {"STS12": s}, progress=True)
    evaluate_sts(enc, {"STS12": s})
    assert enc.bars == [True, False]
