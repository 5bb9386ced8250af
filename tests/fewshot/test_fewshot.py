"""Few-shot learning with paraphrase augmentation (Table 7): splits, augmentation, classifier,
and a tiny end-to-end run of the job + the gatherer."""

from __future__ import annotations

import importlib.util
import json
import random
from collections import Counter

import pytest
from paraphrasers import RuleParaphraserForTests

from paraamr.errors import ConfigError, InputError
from paraamr.fewshot.augment import (
    TEMPLATES,
    SCPNParaphraser,
    augment,
    is_near_copy,
    repeat_examples,
)
from paraamr.fewshot.data import (
    Example,
    check_no_overlap,
    load_fewshot,
    read_examples,
    sample_k,
    split_dev,
    write_examples,
)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from tiny_bert import build_tiny_bert

    words = " ".join(TOY_WORDS)
    return build_tiny_bert(tmp_path_factory.mktemp("tinybert"), extra_words=[words])


# ---------------------------------------------------------------------------- splits


@pytest.mark.parametrize("task", ["mrpc", "qqp", "rte"])
def test_splits_are_disjoint_and_seeded(data_dir, task):
    a = load_fewshot(task, 15, seed=0, data_dir=data_dir)
    again = load_fewshot(task, 15, seed=0, data_dir=data_dir)
    other = load_fewshot(task, 15, seed=1, data_dir=data_dir)
    uids = lambda xs: [e.uid for e in xs]  # noqa: E731
    assert uids(a.train) == uids(again.train) and uids(a.test) == uids(again.test)
    assert uids(a.train) != uids(other.train)
    assert uids(a.test) == uids(other.test)  # one test set for every few-shot seed
    n_eval = {"mrpc": 408, "qqp": 1000, "rte": 277}[task]  # file sizes (wc -l minus header)
    assert len(a.dev) + len(a.test) == n_eval and len(a.dev) == round(n_eval / 3)
    assert not set(uids(a.dev)) & set(uids(a.test))
    assert len(a.train) == 15 and not set(uids(a.train)) & set(uids(a.test) + uids(a.dev))
    texts = {(" ".join(e.text_a.lower().split()), (e.text_b or "").lower()) for e in a.test}
    assert not any((" ".join(e.text_a.lower().split()), e.text_b.lower()) in texts for e in a.train)
    assert "test" in a.sources and str(a.split_seed) in a.sources["test"]
    if task == "qqp":  # the pool and the evaluation rows are different files of the 10k sample
        assert all("QQP/train.json#" in u for u in uids(a.train))
        assert all("QQP/dev.json#" in u for u in uids(a.test))
        assert "not the GLUE dev set" in a.sources["eval"]
    else:
        assert all(u.startswith("test.tsv:") for u in uids(a.test))
    labels = {"mrpc": {0, 1}, "qqp": {0, 1}, "rte": {0, 1}}[task]
    assert {e.label for e in a.test} == labels


def test_split_and_sample_by_hand():
    pool = [Example(f"s{i}", None, i % 2, f"p#{i}") for i in range(30)]
    idx = random.Random(7).sample(range(30), 5)
    assert [e.uid for e in sample_k(pool, 5, 7)] == [f"p#{i}" for i in idx]
    order = list(range(30))
    random.Random(3).shuffle(order)
    dev, test = split_dev(pool, 3)
    assert {e.uid for e in dev} == {f"p#{i}" for i in order[:10]} and len(test) == 20
    with pytest.raises(InputError):
        sample_k(pool, 31, 0)


def test_overlap_with_the_test_set_is_caught():
    test = [Example("The cat sat .", "A dog ran .", 1, "test.tsv:2")]
    train = [Example("the  cat sat .", "a dog RAN .", 0, "train.json#9")]  # same text, new uid
    with pytest.raises(InputError, match="train.json#9 = test.tsv:2"):
        check_no_overlap(train, test)
    check_no_overlap([Example("other", "text", 0, "train.json#1")], test)


# ---------------------------------------------------------------------------- augmentation


class LengthPerplexity:
    """Perplexity = 10 x the number of words (a hand-checkable stand-in)."""

    def perplexities(self, texts):
        return [10.0 * len(t.split()) for t in texts]


def test_augmentation_keeps_labels_and_counts_drops(tmp_path):
    t0, t1, t2 = TEMPLATES
    examples = [
        Example("The cat sat .", "A cat was sitting .", 1, "a#0"),  # short: passes ppl 110
        Example("One two three four five six seven eight nine ten .", "Short one .", 0, "a#1"),
    ]
    para = RuleParaphraserForTests(copy=[t1], skip=[t2])
    res = augment(examples, para, sentences="both", max_perplexity=110, scorer=LengthPerplexity())
    # per example: t0 rewritten (+3 words "in fact ,"), t1 copied, t2 skipped
    # a#0: "in fact , the cat sat ." = 7 words -> 70; "in fact , a cat was sitting ." 80: kept
    # a#1: "in fact , one ... ten ." = 14 words -> 140 > 110: dropped
    assert res.stats == Counter(
        candidates=6, kept=1, dropped_perplexity=1, dropped_identical=2, dropped_no_output=2
    )
    added = res.examples[2:]
    assert [(e.text_a, e.text_b, e.label) for e in added] == [
        ("in fact , the cat sat .", "in fact , a cat was sitting .", 1)
    ]
    assert res.examples[:2] == examples
    assert all(r["label"] == {"a#0": 1, "a#1": 0}[r["uid"]] for r in res.records)
    assert sum(not r["kept"] for r in res.records) == 5
    # only the second sentence; no perplexity model: the filter is reported as not applied
    res2 = augment(examples, RuleParaphraserForTests(), sentences="second", max_perplexity=110)
    assert res2.perplexity_filter.startswith("not applied")
    assert res2.stats["kept"] == 6 and res2.stats["perplexity_filter_not_applied"] == 6
    assert all(
        e.text_a == src.text_a for e, src in zip(res2.examples[2:5], [examples[0]] * 3, strict=True)
    )
    assert [e.label for e in res2.examples] == [1, 0, 1, 1, 1, 0, 0, 0]
    path = write_examples(tmp_path / "aug.jsonl", res2.examples)
    assert read_examples(path) == res2.examples
    with pytest.raises(ConfigError, match="augment.sentences"):
        augment(examples, para, sentences="all")


def test_a_respaced_copy_is_no_paraphrase():
    """Measured in the Table 7 run: a copying SCPN wrote "Berkeley, California-based" for the
    input's "Berkeley , California-based"; the old check (case + runs of spaces) kept it."""

    class Respace:
        def paraphrase(self, sentences, templates):
            return [
                [s.replace(" ,", ",").replace(" 's", "'s") for _ in templates] for s in sentences
            ]

    ex = [Example("Shares of Berkeley , California-based Xoma 's unit fell .", None, 1, "m#0")]
    res = augment(ex, Respace(), templates=TEMPLATES[:2], max_perplexity=None)
    assert res.stats == Counter(candidates=2, dropped_identical=2)
    assert res.examples == ex


def test_near_copy_is_a_tenth_of_the_words_by_hand():
    src = "one two three four five six seven eight nine ten"  # 10 words: 1 edit allowed
    assert is_near_copy(src, src)
    assert is_near_copy("one two three four five six seven eight nine", src)  # 1 deletion
    assert is_near_copy("ONE two three four five six seven eight nine eleven", src)  # 1 sub
    assert not is_near_copy("two one three four five six seven eight nine ten", src)  # 2 subs
    assert not is_near_copy("one two three four five six seven eight", src)  # 2 deletions
    # a re-ordered sentence (what a syntactic paraphrase does) is far from a near-copy
    assert not is_near_copy("six seven eight nine ten one two three four five", src)
    # punctuation marks are words: "said," = "said ,"; an added comma is one edit
    assert is_near_copy("he said, it fell .", "he said , it fell .", max_share=0.0)
    assert not is_near_copy("he said , , it fell .", "he said , it fell .", max_share=0.0)
    # a tokenizer's split clitics are the same words: "do n't" = "don't", "Xoma 's" = "Xoma's"
    assert is_near_copy("they do n't like Xoma 's unit", "They don't like Xoma's unit", 0.0)
    assert not is_near_copy("they do not like Xoma 's unit", "They don't like Xoma's unit", 0.0)


def test_augmentation_counts_the_kept_near_copies():
    class OneWord:  # template 1: one word inserted (near-copy of 20 words); template 2: rewrite
        def paraphrase(self, sentences, templates):
            return [[f"so {s}", " ".join(reversed(s.split()))] for s in sentences]

    long_ = " ".join(f"w{i}" for i in range(20))
    ex = [Example(long_, None, 1, "n#0"), Example("a b c", None, 0, "n#1")]
    res = augment(ex, OneWord(), templates=TEMPLATES[:2], max_perplexity=None)
    # n#0: "so w0 .. w19" (1 edit of 20: near) and the reversal (kept, not near);
    # n#1: "so a b c" (1 edit of 3: not near) and "c b a" (2 edits: not near)
    assert res.stats == Counter(candidates=4, kept=4, kept_near_copy=1)
    assert [r["near_copy"] for r in res.records] == [True, False, False, False]
    # a run that keeps nothing still says 0 (not "not counted"); None switches the count off
    none_kept = augment(ex, OneWord(), templates=TEMPLATES[:2], max_perplexity=1, scorer=_Ppl100())
    assert none_kept.stats["kept"] == 0 and "kept_near_copy" in none_kept.stats
    off = augment(ex, OneWord(), templates=TEMPLATES[:2], max_perplexity=None, near_copy_share=None)
    assert "kept_near_copy" not in off.stats and {r["near_copy"] for r in off.records} == {None}


class _Ppl100:
    def perplexities(self, texts):
        return [100.0] * len(texts)


def test_repeat_baseline_is_the_augmented_size():
    ex = [Example("a", "b", 1, "x#0"), Example("c", "d", 0, "x#1")]
    rep = repeat_examples(ex, 3)
    assert len(rep) == 8 and Counter(e.label for e in rep) == Counter({1: 4, 0: 4})


def test_scpn_adapter_regroups_rows_and_explains_a_missing_package():
    class FakeImpl:  # the issue-9 row format: sentence-major "index", "output" (None: skipped)
        def paraphrase(self, sentences, templates):
            rows = [
                {"index": i * len(templates) + j, "output": f"{s}/{j}" if j != 1 else None}
                for i, s in enumerate(sentences)
                for j in range(len(templates))
            ]
            return rows[::-1]

    p = SCPNParaphraser("some/dir")
    p._impl = FakeImpl()
    assert p.paraphrase(["a", "b"], list(TEMPLATES)) == [["a/0", None, "a/2"], ["b/0", None, "b/2"]]
    if importlib.util.find_spec("paraamr.scpn") is None:
        with pytest.raises(ConfigError, match="paraamr.scpn"):
            SCPNParaphraser("some/dir").paraphrase(["a"], list(TEMPLATES))
    with pytest.raises(ConfigError, match="model"):
        SCPNParaphraser("")


# ---------------------------------------------------------------------------- classifier

TOY_WORDS = ["good", "bad", "movie", "film", "was", "the", "really", "quite", "plot", "acting"]


def test_accuracy_f1_by_hand():
    from paraamr.fewshot.module import accuracy_f1

    # gold 1 1 1 0 0 0 0 / pred 1 1 0 1 0 0 0: tp 2, fp 1, fn 1 -> F1 = 2*2/(3+3); acc 5/7
    got = accuracy_f1([1, 1, 0, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0], f1_label=1)
    assert got["acc"] == pytest.approx(500 / 7) and got["f1"] == pytest.approx(400 / 6)
    assert accuracy_f1([0, 0], [1, 1], f1_label=1)["f1"] == 0.0
    assert "f1" not in accuracy_f1([0], [0], f1_label=None)


@pytest.mark.slow  # ~15 s on an idle 2-core machine, minutes on a loaded one
def test_classifier_learns_a_separable_toy_task(tiny_bert):
    import pytorch_lightning as pl

    from paraamr.fewshot.module import FewShotClassifier, FewShotDataModule

    rng = random.Random(0)
    filler = TOY_WORDS[2:]

    def make(n):
        out = []
        for i in range(n):
            label = i % 2
            words = rng.sample(filler, 3) + ["good" if label else "bad"]
            rng.shuffle(words)
            out.append(Example(" ".join(words), None, label, f"toy#{i}"))
        return out

    train, dev = make(32), make(40)
    pl.seed_everything(0)
    module = FewShotClassifier(str(tiny_bert), num_labels=2, f1_label=1, lr=3e-3)
    before = module.predict_labels(dev)
    dm = FewShotDataModule(train, dev, module.tokenizer, batch_size=8, seed=0)
    trainer = pl.Trainer(
        max_epochs=15,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(module, datamodule=dm)
    preds = module.predict_labels(dev)
    acc = sum(p == e.label for p, e in zip(preds, dev, strict=True)) / len(dev)
    assert acc >= 0.95, (acc, before)
    assert trainer.callback_metrics["val/acc"] >= 95.0


# ---------------------------------------------------------------------------- end to end


@pytest.mark.slow  # five tiny-BERT jobs + the gatherer
def test_tiny_table7_run_produces_the_schema(compose_config, data_dir, tiny_bert, tmp_path):
    from omegaconf import OmegaConf, open_dict

    from analysis.make_table7 import main as make_table7
    from paraamr.fewshot.job import run_job

    runs = tmp_path / "runs"
    for aug, seed in (("none", 0), ("none", 1), ("repeat", 0), ("repeat", 1), ("scpn", 0)):
        cfg = compose_config(
            "fewshot",
            "task=mrpc",
            "k=4",
            f"augment={aug}",
            f"seed={seed}",
            f"paths.data_dir={data_dir}",
            f"model.model_name_or_path={tiny_bert}",
            "trainer.max_epochs=1",
            "logger.wandb.enabled=false",
            f"out_dir={runs}/{aug}/{seed}",
        )
        if aug == "scpn":  # the test-only rule paraphraser stands in for the issue-9 model
            with open_dict(cfg):
                cfg.augment.paraphraser = OmegaConf.create(
                    {"_target_": "paraphrasers.RuleParaphraserForTests"}
                )
                cfg.augment.lm = None
        res = run_job(cfg)
        assert set(res["test"]) == {"acc", "f1"} and res["n_test"] == 272
        assert not (runs / aug / str(seed) / "checkpoints").exists()
        lines = (runs / aug / str(seed) / "test_predictions.jsonl").read_text().splitlines()
        preds = [json.loads(x) for x in lines]
        maj = Counter(res["train_labels"]).most_common(1)[0][0]
        assert res["test_constant_majority"]["acc"] == pytest.approx(
            100 * sum(p["label"] == maj for p in preds) / 272
        )
        assert res["test"]["acc"] == pytest.approx(
            100 * sum(p["label"] == p["pred"] for p in preds) / 272
        )
        n_train = len(open(res["train_file"]).read().splitlines())  # noqa: SIM115
        assert n_train == res["n_train"] == {"none": 4, "repeat": 16}.get(aug, n_train)
    scpn = json.loads((runs / "scpn" / "0" / "results.json").read_text())
    assert scpn["augmentation"] == "scpn-paraamr" and scpn["augment"]["stats"]["candidates"] == 12
    assert scpn["augment"]["perplexity_filter"].startswith("not applied")
    out = make_table7(["--runs", str(runs), "--out", str(tmp_path / "t7"), "--no-wandb"])
    rows = {r["setting"]: r for r in out["rows"]}
    assert list(rows) == ["MRPC k=4 none", "MRPC k=4 repeat", "MRPC k=4 scpn-paraamr"]
    assert rows["MRPC k=4 none"]["n_seeds"] == 2 and "d_acc" not in rows["MRPC k=4 none"]
    rep = rows["MRPC k=4 repeat"]
    by_seed = {
        (a, s): json.loads((runs / a / str(s) / "results.json").read_text())["test"]["acc"]
        for a in ("none", "repeat")
        for s in (0, 1)
    }
    diffs = [by_seed["repeat", s] - by_seed["none", s] for s in (0, 1)]
    assert rep["d_acc"] == pytest.approx(sum(diffs) / 2, abs=1e-3)
    assert rep["wins"].startswith(f"{sum(d > 0 for d in diffs)}/2")
    assert "d_acc_repeat" in rows["MRPC k=4 scpn-paraamr"]
    payload = json.loads((tmp_path / "t7" / "table7.json").read_text())
    assert payload["meta"]["run_kind"] == "offline analogue"
    assert "GLUE MRPC dev set" in payload["meta"]["test_sets"]["mrpc"]["test"]
    assert any(p["setting"] == "MRPC k=15 scpn-paraamr" for p in payload["paper"])
    md = (tmp_path / "t7" / "table7.md").read_text()
    assert "| MRPC k=15 none | paper" in md and "test set: 2/3 of" in md
    # the figure's points are those same per-seed differences
    from paraamr.tables.table7 import paired_differences

    results = [json.loads(p.read_text()) for p in sorted(runs.rglob("results.json"))]
    pts = paired_differences(results)["MRPC k=4 repeat"]
    assert [s for s, _ in pts] == [0, 1] and [d for _, d in pts] == pytest.approx(diffs)
    assert (tmp_path / "t7" / "table7_paired.pdf").stat().st_size > 0
    header = (tmp_path / "t7" / "table7.csv").read_text().splitlines()[0]
    assert header.startswith("source,setting,n_seeds,acc_mean,f1_mean,const_acc_mean,d_acc")


def test_table7_rows_sum_the_near_copies_and_omit_them_for_older_runs():
    from paraamr.tables.table7 import gather_rows, table7_layout

    def run(aug, seed, acc, stats=None):
        r = {"setting": f"MRPC k=15 {aug}", "task": "mrpc", "k": 15, "augmentation": aug,
             "seed": seed, "test": {"acc": acc}, "sources": {"test": "t"}}  # fmt: skip
        if stats is not None:
            r["augment"] = {"stats": stats, "perplexity_filter": "off"}
        return r

    runs = [
        run("none", 0, 70.0),
        run("none", 1, 72.0),
        run("scpn-x", 0, 71.0, {"candidates": 45, "kept": 30, "kept_near_copy": 4}),
        run("scpn-x", 1, 69.0, {"candidates": 45, "kept": 20, "kept_near_copy": 7}),
    ]
    row = {r["setting"]: r for r in gather_rows(runs)}["MRPC k=15 scpn-x"]
    got = (row["augment_kept"], row["augment_candidates"], row["augment_near_copies"])
    assert got == (50, 90, 11)
    note = table7_layout("n").row_notes(row)
    assert any("kept 50/90" in n and "11 of them near-copies" in n for n in note)
    # a run from before the near-copy count: no number rather than a wrong 0
    runs[3]["augment"]["stats"].pop("kept_near_copy")
    row = {r["setting"]: r for r in gather_rows(runs)}["MRPC k=15 scpn-x"]
    assert "augment_near_copies" not in row
    assert not any("near-copies" in n for n in table7_layout("n").row_notes(row))
    # ... but a seed that kept nothing has nothing to count; the share recorded is the one shown
    runs[3]["augment"]["stats"]["kept"] = 0
    for r in runs[2:]:
        r["augment"]["near_copy_share"] = 0.2
    row = {r["setting"]: r for r in gather_rows(runs)}["MRPC k=15 scpn-x"]
    assert row["augment_near_copies"] == 4
    assert any("at most 20% of the input" in n for n in table7_layout("n").row_notes(row))


def test_predictions_show_a_progress_bar_with_a_total(tiny_bert, capsys):
    """Scoring a test split (a hub dev set has up to 40k pairs) shows a tqdm bar over the
    batches: total, rate and ETA."""
    from paraamr.fewshot.module import FewShotClassifier

    module = FewShotClassifier(str(tiny_bert), num_labels=2, f1_label=1)
    examples = [Example(f"{w} good", None, i % 2, f"x#{i}") for i, w in enumerate(TOY_WORDS[:10])]
    preds = module.predict_labels(examples, batch_size=4, progress=True)
    assert len(preds) == 10 and set(preds) <= {0, 1}
    err = capsys.readouterr().err
    assert "predict" in err and "3/3" in err
