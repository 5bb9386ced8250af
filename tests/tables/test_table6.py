"""Table 6 end to end on a tiny model (copy, trained rows, BLEU recomputed from the files) and
the parse-control check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraamr.errors import ConfigError


@pytest.mark.slow
def test_tiny_table6_end_to_end_and_bleu_recomputed_from_files(
    compose_config, scpn_train_cfg, tmp_path, tiny_gpt2, pairs_tsv, data_dir, monkeypatch
):
    import sacrebleu

    from paraamr.results import read_results
    from paraamr.scpn.job import run_job
    from paraamr.tables.table6 import gather_rows, render

    common = (f"paths.data_dir={data_dir}", "eval.test_sets=[quora,pan]", "eval.limit=6",
              "eval.samples=3", "logger.wandb.enabled=false", "data.parse_cache=null",
              "eval.control=false")  # fmt: skip
    runs = tmp_path / "runs"
    c = run_job(compose_config("table6", "train_corpus=none", f"out_dir={runs}/copy", *common))
    for seed in (0, 1):
        cfg = scpn_train_cfg(runs / f"tiny{seed}", tiny_gpt2, pairs_tsv,
                         f"seed={seed}", "corpus=Tiny", "model.max_new_tokens=8",
                         "model.num_beams=2", "model.max_source_length=30",
                         "model.max_syntax_length=50", *common, name="table6")  # fmt: skip
        run_job(cfg)
    scores = read_results(runs, "scpn")
    assert len(scores) == 3
    # copying the source: BLEU to the source is 100, similarity 1
    assert c["tests"]["quora"]["one_minus_bleu_src"] == pytest.approx(0.0, abs=1e-6)
    assert c["tests"]["quora"]["similarity"] == pytest.approx(1.0, abs=1e-4)
    render(gather_rows(scores), tmp_path / "table")
    table = json.loads((tmp_path / "table" / "table6.json").read_text())
    rows = {r["row"]: r for r in table["rows"]}
    assert set(rows) == {"copy source", "Tiny"} and rows["Tiny"]["n_seeds"] == 2
    # BLEU recomputed from the predictions files equals the table (mean over the seeds)
    bleus = []
    for seed in (0, 1):
        d = runs / f"tiny{seed}" / "eval" / "quora"
        preds = (d / "predictions.txt").read_text().splitlines()
        refs = (d / "reference.txt").read_text().splitlines()
        assert len(preds) == len(refs) == len((d / "target_parse.txt").read_text().splitlines())
        bleus.append(sacrebleu.corpus_bleu(preds, [refs]).score)
    assert rows["Tiny"]["bleu_quora"] == pytest.approx(sum(bleus) / 2, abs=1e-3)
    d = runs / "copy" / "eval" / "pan"
    src = (d / "source.txt").read_text().splitlines()
    refs = (d / "reference.txt").read_text().splitlines()
    want = sacrebleu.corpus_bleu(src, [refs]).score
    assert rows["copy source"]["bleu_pan"] == pytest.approx(want, abs=1e-3)
    md = (tmp_path / "table" / "table6.md").read_text()
    assert "| ParaAMR | paper (Huang et al. 2023, Table 6) | 5 | 48.50 |" in md
    assert "stand-ins" in md and "ours (offline analogue)" in md
    assert (tmp_path / "table" / "table6.csv").exists()
    assert "control gain" not in md  # only when a run measured it

    # eval_only: the model tiny0 holds, re-evaluated on quora with the parse-control run; no
    # training happens and pan's scores are kept
    import paraamr.scpn.train

    def no_training(cfg):
        raise AssertionError("eval_only trained")

    monkeypatch.setattr(paraamr.scpn.train, "train", no_training)
    before = json.loads((runs / "tiny0" / "results.json").read_text())["tests"]
    cfg = scpn_train_cfg(runs / "tiny0", tiny_gpt2, pairs_tsv, "seed=0",
                     "corpus=Tiny", "model.max_new_tokens=8", "model.num_beams=2",
                     "model.max_source_length=30", "model.max_syntax_length=50", *common,
                     "eval_only=true", "eval.test_sets=[quora]", "eval.control=true",
                     name="table6")  # fmt: skip
    again = run_job(cfg)["tests"]
    assert again["pan"] == before["pan"] and again["quora"]["bleu"] == before["quora"]["bleu"]
    sig = json.loads((runs / "tiny0" / "results.json").read_text())["signature"]
    assert "|test:quora,pan:first6|" in sig and "|control:swapped" in sig  # what the file holds
    assert "control_n" in again["quora"]  # the scores themselves: the test above
    d = runs / "tiny0" / "eval" / "quora"
    assert len((d / "predictions_swapped.txt").read_text().splitlines()) == len(refs_q := (
        d / "reference.txt").read_text().splitlines())  # fmt: skip
    assert refs_q
    with pytest.raises(ConfigError, match="eval_only=true.*train_result.json"):
        run_job(scpn_train_cfg(runs / "never", tiny_gpt2, pairs_tsv, *common,
                           "eval_only=true", name="table6"))  # fmt: skip


class _TableParser:
    """Parses sentences from a fixed table (sentence -> bracketed tree with words)."""

    name = "table"

    def __init__(self, trees):
        self.trees = trees

    def signature(self):
        return "table"

    def parse(self, sentences):
        from paraamr.parsers.base import Parsed

        return [Parsed(tuple(s.split()), self.trees[s]) for s in sentences]


def test_parse_control_swaps_parses_and_scores_both_ways(tmp_path):
    from paraamr.metrics.ted import tree_edit_distance
    from paraamr.metrics.trees import parse_bracketed
    from paraamr.scpn.evaluate import evaluate_model

    trees = ["(ROOT (S (NP (NN a)) (VP (VB b)) (. .)))", "(ROOT (NP (NN c)))",
             "(ROOT (S (VP (VB d) (NP (NN e)))))"]  # fmt: skip
    # each source parses like its own reference (a paraphrase keeps the syntax)
    table = {f"src{i}": t for i, t in enumerate(trees)} | {
        f"ref{i}": t for i, t in enumerate(trees)
    }
    pairs = [(f"src{i}", f"ref{i}") for i in range(3)]
    parse_of_ref = {}

    def follower(sources, tparses, sparses):  # writes the reference whose parse it was given
        return [parse_of_ref[tp] for tp in tparses]

    def copier(sources, tparses, sparses):
        return list(sources)

    from paraamr.scpn.formats import linearize

    parse_of_ref.update({linearize(parse_bracketed(t)): f"ref{i}" for i, t in enumerate(trees)})
    enc = type("E", (), {"encode": lambda self, xs, **k: __import__("numpy").ones((len(xs), 4))})()
    kw = {"parser": _TableParser(table), "encoder": enc, "control": True}
    # swapped_order(3) = [1, 2, 0]: pair i is given the parse of pair (i + 1) % 3
    ted3 = [tree_edit_distance(trees[(i + 1) % 3], trees[i], depth=3) for i in range(3)]
    f = evaluate_model(follower, pairs, tmp_path / "f", **kw)
    assert f["control_ted3_given"] == 0 and f["control_gain"] == pytest.approx(sum(ted3) / 3)
    c = evaluate_model(copier, pairs, tmp_path / "c", **kw)
    assert c["control_ted3_own"] == 0 and c["control_gain"] == pytest.approx(-sum(ted3) / 3)
    assert c["control_gain"] < 0 < f["control_gain"]
    lines = (tmp_path / "f" / "predictions_swapped.txt").read_text().splitlines()
    assert lines == ["ref1", "ref2", "ref0"]
    swapped = (tmp_path / "f" / "target_parse_swapped.txt").read_text().splitlines()
    assert swapped == [linearize(parse_bracketed(trees[j])) for j in (1, 2, 0)]
    assert "control_gain" not in evaluate_model(copier, pairs, tmp_path / "n", **{**kw,
                                                "control": False})  # fmt: skip
    # the table gets a control column for the test sets a run measured it on
    from paraamr.tables.table6 import gather_rows, render

    runs = [
        {"corpus": name, "input_format": "skeleton", "seed": 0, "signature": "s",
         "tests": {"quora": r, "pan": {"bleu": 1.0}}}
        for name, r in (("F", f), ("C", c))
    ]  # fmt: skip
    render(gather_rows(runs), tmp_path / "t")
    md = (tmp_path / "t" / "table6.md").read_text()
    assert "control gain quora" in md and "control gain pan" not in md
    assert "| F | ours (offline analogue) | 1 |" in md and f"{f['control_gain']:.2f} |" in md
    # and a figure: BLEU vs TED-3 per test set, the control gains (pan has no TED: no point)
    from paraamr.figures import png_description
    from paraamr.tables.table6 import plot_table6

    png, pdf = plot_table6(gather_rows(runs), tmp_path / "t" / "fig")
    assert pdf.read_bytes()[:4] == b"%PDF" and png_description(png) == "C: s\nF: s"  # rows sorted


def test_table6_signature_names_the_metric_objects_and_the_ted_definition(compose_config):
    """The Table 6 signature said ``ted:paraamr,d3:3`` without the preset's definition version,
    so rows scored under different TED definitions could share it."""
    from paraamr.scpn.job import signature
    from paraamr.signature import Signature

    cfg = compose_config("table6", "train_corpus=none")
    f = Signature(signature(cfg, "copy", "fmt:copy", "spacy(x)", 0)).fields
    assert (
        f["ted"] == "paraamr-v2,d3:3,unit-cost,words:no,pos:yes,kernel:edist,target=reference-parse"
    )
    assert f["bleu"] == "sacrebleu-corpus,tok:13a,case:as-written"
    assert f["sim"] == "cos(minilm)"
    # the encoder comes from the similarity group, as Table 2's: its settings reach the signature
    for over, sim in (("similarity.backend=openvino", "cos(minilm,openvino)"),
                      ("similarity=simcse", "cos(simcse)")):  # fmt: skip
        # device=cpu: with a CUDA GPU and no device, the encoder would run torch there
        cfg = compose_config("table6", "train_corpus=none", over, "similarity.device=cpu")
        assert Signature(signature(cfg, "copy", "fmt:copy", "p", 0)).fields["sim"] == sim


def test_table6_signature_names_identity_pairs_a_source_limit_the_filter_and_dev(compose_config):
    from paraamr.scpn.job import signature
    from paraamr.signature import Signature

    def pairs(*over):
        cfg = compose_config("table6", *over)
        return Signature(signature(cfg, "m", "fmt:skeleton", "p", 300)).fields.get("pairs")

    tail = ",ppl:<=None,dev:last100"  # conf/table6.yaml: no filter, the last 100 sources dev
    assert pairs("train_corpus=msrp") == "max5,identity:no" + tail
    assert pairs("train_corpus=msrp", "data.identity=true") == "max5,identity:yes" + tail
    assert pairs("train_corpus=none") is None  # the copy row trains nothing
    # a source limit (per corpus for the pooled preset) changes the data, so the signature
    assert pairs("+experiment=table6_pooled").endswith(",first1500")
    assert pairs("train_corpus=msrp", "data.limit_sources=50") == f"max5,identity:no{tail},first50"
    # runs that differ only in the perplexity filter or the dev sources are other settings
    assert pairs("train_corpus=msrp", "data.max_perplexity=85").startswith(
        "max5,identity:no,ppl:<=85,"
    )
    assert pairs("train_corpus=msrp", "data.dev_sources=50").endswith(",dev:last50")


def test_runs_decoded_otherwise_get_their_own_row_not_a_seed_of_another():
    from paraamr.tables.table6 import gather_rows

    def run(seed, n=None, fmt="skeleton", depth=None, cap=None, force=False):
        return {"corpus": "P", "input_format": fmt, "seed": seed, "no_repeat_words": n,
                "template_depth": depth, "word_cap": cap, "force_template": force,
                "tests": {"mrpc": {"bleu": 10.0 + seed}}}  # fmt: skip

    rows = gather_rows([run(0), run(1), run(0, 4), run(0, fmt="noparse"), run(0, 4, depth=3),
                        run(1, 4, depth=3), run(0, 4, depth=5),
                        run(0, 4, depth=5, cap=[1.5, 3.0]), run(0, 4, cap=[1.5, 3.0], force=True),
                        run(1, 4, cap=[1.5, 3.0], force=True)])  # fmt: skip
    assert {r["row"]: r["n_seeds"] for r in rows} == {
        "P": 2, "P, no repeated 4-grams": 1, "P (no parse)": 1,
        "P, depth-3 templates, no repeated 4-grams": 2,
        "P, depth-5 templates, no repeated 4-grams": 1,
        "P, depth-5 templates, no repeated 4-grams, word cap 1.5x+3": 1,
        "P, no repeated 4-grams, word cap 1.5x+3, template forced": 2}  # fmt: skip


def test_runs_with_other_signatures_are_not_pooled_as_seeds():
    """Same corpus, format and decoding fields, but one model trained to 800 steps and one
    decoded with the cap inside the slots: three rows, each pooling only its own seeds, named
    by what their signatures differ in (the seed field ignored)."""
    from paraamr.tables.table6 import gather_rows

    def run(seed, sig):
        return {"corpus": "P", "input_format": "skeleton", "seed": seed,
                "signature": f"paraamr|fmt:skeleton,{sig}|seed:{seed}|test:first100",
                "tests": {"mrpc": {"bleu": 10.0 + seed}}}  # fmt: skip

    slot = "steps:800,forced-template:slot-cap"
    rows = gather_rows([run(0, "steps:400"), run(1, "steps:400"), run(0, "steps:800"),
                        run(2, "steps:800"), run(0, slot)])  # fmt: skip
    got = {r["row"]: (r["n_seeds"], r["mrpc"]["bleu"]["mean"]) for r in rows}
    assert got == {"P [steps:400]": (2, 10.5), "P [steps:800]": (2, 11.0),
                   "P [forced-template:slot-cap, steps:800]": (1, 10.0)}  # fmt: skip
    # the seed gatherer of the other tables splits likewise; a setting that only lacks a field
    from paraamr.tables.sweep import gather_seeds

    rows = gather_seeds([{"corpus": "A", "seed": s, "acc": 70.0 + s, "signature": sig}
                         for s, sig in ((0, "m|seed:0"), (1, "m|seed:1"), (0, "m,x|seed:0"))],
                        {"acc": lambda r: r["acc"]})  # fmt: skip
    assert [(r["dataset"], r["seeds"], r["acc_mean"]) for r in rows] == [
        ("A [without x]", [0, 1], 70.5), ("A [x]", [0], 70.0)]  # fmt: skip


def test_table7_refuses_to_pool_runs_of_different_settings_as_seeds():
    """Table 7 pairs each seed with its "none" baseline by setting name, so runs of one name
    but different signatures (another epoch count here) stop the gathering with a message."""
    from paraamr.errors import InputError
    from paraamr.tables.table7 import gather_rows

    def run(seed, epochs):
        return {"setting": "MRPC k=15 none", "task": "mrpc", "k": 15, "augmentation": "none",
                "seed": seed, "test": {"acc": 60.0}, "sources": {"test": "t"},
                "signature": f"task:glue-mrpc|k:15|epochs:{epochs}"}  # fmt: skip

    assert gather_rows([run(0, 20), run(1, 20)])[0]["n_seeds"] == 2
    with pytest.raises(InputError, match=r"1 as MRPC k=15 none \[epochs:5\]"):
        gather_rows([run(0, 20), run(1, 20), run(2, 5)])


def test_the_gatherers_end_with_one_line_on_a_run_folder_without_results(tmp_path, capsys,
                                                                         monkeypatch):  # fmt: skip
    import importlib

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    for name in ("make_table6", "make_table7"):
        mod = importlib.import_module(f"analysis.{name}")
        with pytest.raises(SystemExit) as e:
            mod.main(["--runs", str(tmp_path), "--out", str(tmp_path / "out")])
        assert e.value.code == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"python analysis/{name}.py: error: ") and "\n" not in err
        assert str(tmp_path) in err
