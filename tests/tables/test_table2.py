"""`make table2` end to end, in-process through Hydra's compose API, on the real ParaBank-Eval."""

import json

import pytest

from paraamr.corpus.specs import parse_corpus_specs
from paraamr.errors import DataNotFoundError, ParaAMRError
from paraamr.tables.run_table2 import run_table2


@pytest.fixture(scope="module")
def table2_run(tmp_path_factory, data_dir, compose_config):
    out = tmp_path_factory.mktemp("t2")
    result = run_table2(
        compose_config(
            "table2",
            f"out_dir={out}",
            "limit=12",
            "progress=false",
            "bootstrap=50",
            f"paths.data_dir={data_dir}",
        )
    )
    return out, result


def test_outputs_have_the_documented_schema(table2_run):
    out, _ = table2_run
    payload = json.loads((out / "table2.json").read_text())
    assert [r["dataset"] for r in payload["rows"]] == ["ParaNMT", "ParaBank1"]
    metrics = ["similarity", "one_minus_bleu", "one_minus_iou", "ted3", "tedf"]
    documented = ["dataset", "n_sources", "n_pairs", *metrics, "signature"]  # README, by hand
    for r in payload["rows"]:
        acceptable = {"acceptable", "acceptable_ci95", "acceptable_signature"}
        assert set(r) == {*documented, "dropped_identical", "skipped"} | acceptable | {
            f"{m}_ci95" for m in metrics
        }
        assert r["n_sources"] == 12 and r["n_pairs"] >= 11
        assert 0 < r["similarity"] <= 100 and 0 <= r["one_minus_bleu"] <= 100
        assert 0 <= r["one_minus_iou"] <= 100 and r["tedf"] >= r["ted3"] >= 0
        assert "parser:spacy-projection" in r["signature"]
        assert "sim:cos(minilm,openvino)" in r["signature"]  # the offline default backend
        lo, hi = r["similarity_ci95"]
        assert lo <= r["similarity"] <= hi
    md = (out / "table2.md").read_text()
    assert "offline analogue" in md and "84.28" in md and "paper" in md
    csv_lines = (out / "table2.csv").read_text().splitlines()
    assert csv_lines[0] == "source," + ",".join(documented[:-1] + ["acceptable", "signature"])
    assert len(csv_lines) == 1 + 2 + 4  # header, our two rows, the paper's four


def test_acceptable_share_and_filtered_rows_by_hand(table2_run, tmp_path):
    """The acceptable share is the share of the corpus's scored pairs (its shard file, read here
    by hand) at or above the calibrated cosine; a filtered row's numbers are the per-source
    means of the kept pairs, averaged over the sources that keep one."""
    import shutil

    from paraamr.tables.run_table2 import finish_table2

    out = tmp_path / "t2"  # a copy: the merges below rewrite the run's tables
    shutil.copytree(table2_run[0], out)
    acc = json.loads((out / "acceptable.json").read_text())
    assert acc["judge_cut"] == 70 and acc["ci95"][0] <= acc["threshold"] <= acc["ci95"][1]
    assert 0.3 < acc["threshold"] < 0.9 and acc["n_sources"] == 400
    t = 0.75
    res = finish_table2(
        str(out),
        ["ParaNMT", "ParaBank1"],
        meta={},
        acceptable=True,
        min_similarity=t,
        wandb_cfg={"enabled": False},
    )
    rows = {r["dataset"]: r for r in res["rows"]}
    assert list(rows) == ["ParaNMT", "ParaNMT sim≥0.75", "ParaBank1", "ParaBank1 sim≥0.75"]
    for name in ("ParaNMT", "ParaBank1"):
        pairs = [
            json.loads(line)
            for f in sorted((out / "shards" / name).glob("*.pairs.jsonl"))
            for line in f.read_text().splitlines()
        ]
        sims = [p["similarity"] for p in pairs]
        share = sum(s >= acc["threshold"] for s in sims) / len(sims)
        assert rows[name]["acceptable"] == pytest.approx(100 * share, abs=1e-3)
        kept = [p for p in pairs if p["similarity"] >= t]
        by_src: dict = {}
        for p in kept:
            by_src.setdefault(p["source_id"], []).append(p)
        f = rows[f"{name} sim≥0.75"]
        assert f["n_pairs"] == len(kept) and f["n_sources"] == len(by_src)
        for m, scale in (("similarity", 100), ("ted3", 1), ("one_minus_iou", 100)):
            per_src = [sum(p[m] for p in ps) / len(ps) for ps in by_src.values()]
            assert f[m] == pytest.approx(scale * sum(per_src) / len(per_src), abs=1e-3)
        assert f["kept_sources_share"] == pytest.approx(len(by_src) / rows[name]["n_sources"])
        assert f["acceptable"] == pytest.approx(
            100 * sum(p["similarity"] >= acc["threshold"] for p in kept) / len(kept), abs=1e-3
        )
        assert f["signature"].endswith("|filter:sim>=0.75")
    md = (out / "table2.md").read_text()
    assert "acceptable" in md and acc["signature"] in md and "ParaBank1 sim≥0.75" in md
    # the filter at the acceptable similarity itself: every kept pair is acceptable
    res = finish_table2(
        str(out),
        ["ParaNMT"],
        meta={},
        acceptable=True,
        min_similarity="acceptable",
        wandb_cfg={"enabled": False},
    )
    f = res["rows"][1]
    assert f["dataset"] == "ParaNMT sim≥acceptable" and f["min_similarity"] == acc["threshold"]
    assert f["acceptable"] == 100.0
    with pytest.raises(ParaAMRError, match="needs the acceptable share"):
        finish_table2(str(out), ["ParaNMT"], meta={}, min_similarity="acceptable")
    # a calibration under another encoder is refused, not applied to these rows
    path = out / "acceptable.json"
    saved = path.read_text()
    try:
        path.write_text(json.dumps({**acc, "encoder": "simcse"}))
        with pytest.raises(ParaAMRError, match="calibrated under 'simcse'"):
            finish_table2(str(out), ["ParaNMT"], meta={}, acceptable=True)
    finally:
        path.write_text(saved)


def test_a_filter_setting_off_the_cosine_scale_stops_before_scoring(tmp_path, compose_config):
    from paraamr.errors import ConfigError

    a = tmp_path / "a.tsv"
    a.write_text("The cat sat on the mat.\tOn the mat sat the cat.\n")
    for bad, what in (("60", "0.6, not 60"), ("acceptible", "nor 'acceptable'")):
        cfg = compose_config(
            "table2",
            f"out_dir={tmp_path}/out",
            f"corpora='A={a}:pairs'",
            f"filter.min_similarity={bad}",
        )
        with pytest.raises(ConfigError, match=what):
            run_table2(cfg)
    assert not (tmp_path / "out" / "shards").exists()


def test_distribution_figure_draws_the_per_source_values(table2_run):
    """The figure's data are the per-source values of the shard files (read here by hand), in
    the table's units, and their means are the table's numbers."""
    from paraamr.figures import png_description
    from paraamr.tables.table2 import source_distributions

    out, _ = table2_run
    rows = {r["dataset"]: r for r in json.loads((out / "table2.json").read_text())["rows"]}
    data = source_distributions(out, ["ParaNMT", "ParaBank1"])
    for name in ("ParaNMT", "ParaBank1"):
        by_hand = {"similarity": [], "ted3": []}
        for f in sorted((out / "shards" / name).glob("*.sources.jsonl")):
            for line in f.read_text().splitlines():
                r = json.loads(line)
                by_hand["similarity"].append(100 * r["similarity"])
                by_hand["ted3"].append(r["ted3"])
        for m in ("similarity", "ted3"):
            assert sorted(data[name][m]) == pytest.approx(sorted(by_hand[m]))
            mean = sum(by_hand[m]) / len(by_hand[m])
            assert rows[name][m] == pytest.approx(mean, abs=0.006)  # the table rounds to 2
    assert png_description(out / "table2_distributions.png") == rows["ParaNMT"]["signature"]


def test_wandb_offline_run_files(table2_run):
    out, _ = table2_run
    runs = sorted((out / "wandb").glob("offline-run-*"))
    assert len(runs) == 3  # one per corpus + the comparison table
    for r in runs:
        assert list(r.glob("run-*.wandb"))
    tables = list((out / "wandb").glob("offline-run-*/files/media/table/*.table.json"))
    assert len(tables) == 1
    t = json.loads(tables[0].read_text())
    names = [row[0] for row in t["data"]]
    assert "ParaNMT" in names and "ParaAMR (paper)" in names
    # each corpus's run: its group, its name and its Table 2 row as the summary
    from wandb_records import read_offline_run

    rows = {r["dataset"]: r for r in json.loads((out / "table2.json").read_text())["rows"]}
    recorded = [read_offline_run(r) for r in runs]
    assert sorted(r["name"] for r in recorded) == ["ParaBank1", "ParaNMT", "table2-comparison"]
    assert {(r["project"], r["group"]) for r in recorded} == {("paraamr", "table2")}
    for r in recorded:
        if r["name"] in rows:
            want = rows[r["name"]]
            keys = ["dataset", "n_sources", "n_pairs", "similarity", "one_minus_bleu"]
            keys += ["one_minus_iou", "ted3", "tedf", "signature"]
            assert r["summary"] == {k: want[k] for k in keys}
            assert r["config"]["dataset"] == r["name"]


def test_no_data_gives_a_clear_message(tmp_path, compose_config):
    with pytest.raises(DataNotFoundError, match="make data"):
        missing = f"paths.data_dir={tmp_path}/nothing-here"
        run_table2(compose_config("table2", f"out_dir={tmp_path}", missing))


def test_user_corpora(tmp_path, compose_config):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.tsv"
    a.write_text(
        json.dumps(
            {
                "text": "The cat sat on the mat.",
                "paraphrases": [{"para_text": "On the mat sat the cat."}],
            }
        )
        + "\n"
        + json.dumps({"text": "Only in A.", "paraphrases": [{"para_text": "A only."}]})
        + "\n"
    )
    b.write_text("The cat sat on the mat.\tA cat was sitting on the mat.\n")
    res = run_table2(
        compose_config(
            "table2",
            f"out_dir={tmp_path}/out",
            f"corpora='A={a} B={b}:pairs'",
            "progress=false",
            "wandb.enabled=false",
        )
    )
    assert [r["n_sources"] for r in res["rows"]] == [1, 1]


def test_corpus_spec_errors():
    with pytest.raises(ParaAMRError):
        parse_corpus_specs("justafile.jsonl")
    with pytest.raises(ParaAMRError, match="unknown format"):
        parse_corpus_specs("A=x.tsv:parabank9")
    with pytest.raises(ParaAMRError, match="unique"):
        parse_corpus_specs("A=x.tsv A=y.tsv")


@pytest.mark.parametrize(
    "group,option",
    [
        ("parser", "gold"),
        ("parser", "spacy"),
        ("ted", "aesop"),
        ("ted", "qcpg"),
        ("ted", "paraamr-script"),
        ("ted", "root-depth"),
        ("similarity", "simcse"),
    ],
)
def test_config_groups_compose(group, option, compose_config):
    c = compose_config("table2", f"{group}={option}")
    assert c[group]
    paper = compose_config("table2", "+experiment=table2_paper")
    assert paper.similarity.name == "simcse" and paper.parser._target_.endswith("StanzaParser")


def test_ted_configs_name_existing_presets(compose_config):
    from paraamr.metrics.ted import VARIANTS

    for name in VARIANTS:
        assert compose_config("table2", f"ted={name}").ted.variant == name


def test_self_bleu_column_only_when_scored(compose_config):
    from paraamr.tables.render import render_markdown
    from paraamr.tables.table2 import table2_layout

    def render_table2_markdown(rows, meta):
        return render_markdown(table2_layout(rows), rows, kind="offline analogue")

    assert compose_config("table2").metrics.self_bleu is False
    row = {"dataset": "X", "n_sources": 1, "n_pairs": 2, "signature": "s"}
    row |= dict.fromkeys(("similarity", "one_minus_bleu", "one_minus_iou", "ted3", "tedf"), 1.0)
    plain = render_table2_markdown([row], {})
    assert "Self-BLEU" not in plain
    md = render_table2_markdown([row | {"self_bleu": 42.5}], {})
    header = next(line for line in md.splitlines() if line.startswith("| dataset"))
    assert header.endswith("| TED-F | Self-BLEU |")
    assert "| 1.00 | 42.50 |" in md and "| 13.94 | – |" in md  # the paper has no Self-BLEU


def test_stanza_without_models_says_how_to_download():
    from paraamr.errors import ParserError
    from paraamr.parsers.stanza_backend import StanzaParser

    with pytest.raises(ParserError, match="stanza.download"):
        StanzaParser(model_dir="/nonexistent-stanza-dir")


def test_data_dir_falls_back_to_project_data(tmp_path, monkeypatch):
    from paraamr.datadir import resolve_data_dir

    monkeypatch.delenv("PARAAMR_DATA", raising=False)
    proj = tmp_path / "proj"
    (proj / "data").mkdir(parents=True)
    assert resolve_data_dir(None, project_root=proj) == proj / "data"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert resolve_data_dir(None, project_root=proj) == tmp_path / "shared" / "data"


def test_extra_corpora_follow_the_rows_and_data_paths_lie_in_data_dir(tmp_path, compose_config):
    data = tmp_path / "data" / "para"
    data.mkdir(parents=True)
    (data / "x_src.txt").write_text("The cat sat on the mat.\n")
    (data / "x_trg.txt").write_text("A cat was sitting on the mat.\n")
    a = tmp_path / "a.tsv"
    a.write_text("The cat sat on the mat.\tOn the mat sat the cat.\n")
    res = run_table2(
        compose_config(
            "table2",
            f"out_dir={tmp_path}/out",
            f"paths.data_dir={tmp_path}/data",
            f"corpora='A={a}:pairs'",
            "extra_corpora='N=data:para/x_src.txt:src-trg'",
            "progress=false",
            "wandb.enabled=false",
        )
    )
    assert [(r["dataset"], r["n_pairs"]) for r in res["rows"]] == [("A", 1), ("N", 1)]
    # acceptable.enabled=auto: no judgements in this data folder, so no column (logged)
    assert all("acceptable" not in r for r in res["rows"])
    with pytest.raises(DataNotFoundError, match="acceptable.enabled=false"):
        run_table2(
            compose_config(
                "table2",
                f"out_dir={tmp_path}/out2",
                f"paths.data_dir={tmp_path}/data",
                f"corpora='A={a}:pairs'",
                "acceptable.enabled=true",
            )
        )
    assert not (tmp_path / "out2" / "shards").exists()  # refused before any scoring


def test_extra_corpora_are_added_to_the_default_rows(data_dir, compose_config):
    from paraamr.tables.run_table2 import _specs

    cfg = compose_config("table2", f"paths.data_dir={data_dir}", "extra_corpora='X=x.jsonl'")
    specs, label, _ = _specs(cfg)
    assert [s.name for s in specs] == ["ParaNMT", "ParaBank1", "X"]
    assert label == "ParaBank-Eval-sample+user-corpora"
    with pytest.raises(ParaAMRError, match="unique"):
        twice = "extra_corpora='ParaNMT=x.jsonl'"
        _specs(compose_config("table2", f"paths.data_dir={data_dir}", twice))


def test_paired_comparison_equals_the_shard_rows_by_hand(table2_run, capsys):
    """``paraamr paired``: per source differences of two corpora of one run, read here by hand
    from the shard files and matched on the source text."""
    from paraamr.cli import main
    from paraamr.tables.paired import compare_corpora

    out, _ = table2_run

    def rows(name: str) -> dict:
        found = {}
        for f in sorted((out / "shards" / name).glob("*.sources.jsonl")):
            for line in f.read_text().splitlines():
                r = json.loads(line)
                found[r["source"]] = r
        return found

    a, b = rows("ParaNMT"), rows("ParaBank1")
    shared = [s for s in a if s in b]
    res = compare_corpora(out, "ParaNMT", "ParaBank1", bootstrap=200)
    assert res["shared"] == len(shared) == 12
    for m, scale in (("similarity", 100), ("one_minus_iou", 100), ("ted3", 1), ("tedf", 1)):
        d = [scale * (a[s][m] - b[s][m]) for s in shared]
        got = res["metrics"][m]
        assert got["n"] == 12 and got["difference"] == pytest.approx(sum(d) / 12, abs=1e-3)
        assert got["ci95"][0] <= got["difference"] <= got["ci95"][1]
    main(["paired", str(out), "ParaNMT", "ParaBank1", "--bootstrap", "0"])
    printed = capsys.readouterr().out
    assert f"| ted3 | 12 | {res['metrics']['ted3']['a']:.2f} |" in printed
    # a band of source lengths: only the sources of lo <= whitespace words < hi
    lengths = sorted(len(s.split()) for s in shared)
    cut = next(n for n in lengths if n > lengths[0])  # the sources split into two non-empty bands
    for band, keep in (((0, cut), lambda n: n < cut), ((cut, None), lambda n: n >= cut)):
        some = [s for s in shared if keep(len(s.split()))]
        got = compare_corpora(out, "ParaNMT", "ParaBank1", bootstrap=0, words=band)
        d = [a[s]["ted3"] - b[s]["ted3"] for s in some]
        assert 0 < got["shared"] == len(some) < 12 and got["words"] == list(band)
        assert got["metrics"]["ted3"]["difference"] == pytest.approx(sum(d) / len(d), abs=1e-3)
    main(["paired", str(out), "ParaNMT", "ParaBank1", "--bootstrap", "0", "--words", f"{cut}:"])
    assert f"sources of {cut} or more words both have" in capsys.readouterr().out
    for bad in ("9:3", "ten:", "5"):
        with pytest.raises(SystemExit) as exit_:
            main(["paired", str(out), "ParaNMT", "ParaBank1", "--words", bad])
        assert exit_.value.code == 2 and "expected LO:HI or LO:" in capsys.readouterr().err


def test_paired_self_bleu_needs_two_paraphrases_on_both_sides():
    from paraamr.tables.paired import paired_differences

    a = {"s1": {"self_bleu": 0.2, "n_pairs": 3}, "s2": {"self_bleu": 0.4, "n_pairs": 2}}
    b = {"s1": {"self_bleu": 1.0, "n_pairs": 1}, "s2": {"self_bleu": 0.1, "n_pairs": 2}}
    got = paired_differences(a, b, metrics=("self_bleu",), bootstrap=0)["self_bleu"]
    assert got == {"n": 1, "a": 40.0, "b": 10.0, "difference": 30.0, "ci95": None}
    b["s2"]["n_pairs"] = 1  # one paraphrase: no Self-BLEU, so no source is left
    assert paired_differences(a, b, metrics=("self_bleu",), bootstrap=0) == {}


def test_extra_corpora_beside_a_built_preset_add_rows_and_never_replace_its_own(
    data_dir, compose_config
):
    """``+experiment=table2_built_paranmt_small built_dir=D extra_corpora=...``: the preset's two
    rows read from ``D`` stay, the extra rows follow, and an extra row named like a built one
    is refused (it replaced the whole built pair before)."""
    from paraamr.tables.run_table2 import _specs

    preset = (
        "+experiment=table2_built_paranmt_small",
        "built_dir=/b",
        f"paths.data_dir={data_dir}",
    )
    cfg = compose_config("table2", *preset, "extra_corpora='G=/g/all/corpus.jsonl'")
    specs, _, _ = _specs(cfg)
    assert [(s.name, str(s.path)) for s in specs] == [
        # the data folder as the entry point resolves it (a linked folder, its target)
        ("ParaNMT", f"{data_dir.resolve()}/paraphrase/qqppos-paranmt-small/para/valid_src.txt"),
        ("ParaAMR-built", "/b/all/corpus.jsonl"),
        ("ParaAMR-built-no-refocus", "/b/top/corpus.jsonl"),
        ("G", "/g/all/corpus.jsonl"),
    ]
    with pytest.raises(ParaAMRError, match="unique"):
        _specs(compose_config("table2", *preset, "extra_corpora='ParaAMR-built=/g/x.jsonl'"))
