"""Table 5: one real (tiny-budget) job per kind through Hydra's compose API, then the analysis."""

import datetime
import json
import math
from pathlib import Path

import pytest

from paraamr.simcse.job import run_job
from paraamr.tables.table5 import gather_rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir, compose_config):
    root = tmp_path_factory.mktemp("t5")
    common = [
        "sts.max_pairs_per_set=60",
        "logger.wandb.enabled=false",
        f"paths.data_dir={data_dir}",
        "trainer.max_steps=2",
        "data.batch_size=4",
        "callbacks.sts_dev.every_n_steps=2",
        "callbacks.sts_dev.limit_pairs=16",
        "data.limit=40",
    ]
    out = []
    for corpus, seed in (("msrp", 0), ("msrp", 1), ("none", 0)):
        c = compose_config(
            "table5",
            f"train_corpus={corpus}",
            f"seed={seed}",
            *common,
            f"out_dir={root}/runs/{corpus}/seed{seed}",
        )
        out.append(run_job(c))
    return root, out


def test_jobs_write_results(runs):
    root, results = runs
    for r in results:
        assert set(r["sts"]["years"]) == {"STS12", "STS13", "STS14", "STS15", "STS16"}
        # MiniLM on these 60-pair subsamples gives 80.59 untrained (measured); 2 steps at the
        # preset's learning rate cannot move it far
        assert 79.5 < r["sts"]["avg"]["spearman"] < 81.5
        assert "subsample:60" in r["signature"]
    assert results[0]["steps"] == 2 and results[2]["corpus"] == "none"
    untrained = results[2]["sts"]["avg"]["spearman"]
    assert all(abs(r["sts"]["avg"]["spearman"] - untrained) < 0.5 for r in results[:2])
    assert len(list((root / "runs").rglob("results.json"))) == 3
    # each run says when and on what CPU it ran
    from paraamr.utils import cpu_model

    for p in (root / "runs").rglob("results.json"):
        stamp = json.loads(p.read_text())["measured"]
        assert stamp["date"] == datetime.date.today().isoformat() and stamp["cpu"] == cpu_model()


def test_gather_and_analysis_outputs(runs, tmp_path, monkeypatch):

    root, results = runs
    rows = gather_rows(results)
    assert [r["dataset"] for r in rows] == ["none", "MSRP"]
    assert rows[1]["n_seeds"] == 2 and rows[1]["seeds"] == [0, 1]
    # mean ± sample std of two seeds by hand: (a + b) / 2 and |a - b| / sqrt(2)
    for key in ("spearman", "pearson"):
        a, b = (results[i]["sts"]["avg"][key] for i in (0, 1))
        assert rows[1][f"{key}_mean"] == pytest.approx((a + b) / 2, abs=1e-4)
        assert rows[1][f"{key}_std"] == pytest.approx(abs(a - b) / math.sqrt(2), abs=1e-4)
    for y, v in rows[1]["per_year"].items():
        a, b = (results[i]["sts"]["years"][y]["spearman"] for i in (0, 1))
        assert (v["spearman_mean"], v["spearman_std"]) == pytest.approx(
            ((a + b) / 2, abs(a - b) / math.sqrt(2)), abs=1e-4
        )
    assert rows[0]["n_seeds"] == 1 and rows[0]["spearman_std"] == 0.0
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    from analysis.make_table5 import main

    res = main(["--runs", str(root / "runs"), "--out", str(tmp_path)])
    payload = json.loads((tmp_path / "table5.json").read_text())
    assert {
        "dataset",
        "n_seeds",
        "pearson_mean",
        "pearson_std",
        "spearman_mean",
        "spearman_std",
        "per_year",
    } <= set(payload["rows"][0])
    assert (tmp_path / "table5_per_year.png").stat().st_size > 1000
    assert "77.70" in (tmp_path / "table5.md").read_text() and res["rows"]
    # the table names the date and the CPU of its runs, in the markdown and the JSON
    from paraamr.utils import cpu_model

    stamp = results[0]["measured"]
    assert f"Measured {stamp['date']} on {cpu_model()}" in (tmp_path / "table5.md").read_text()
    assert payload["meta"]["measured"] == [stamp]
    tables = list((tmp_path / "wandb").glob("offline-run-*/files/media/table/*.table.json"))
    assert len(tables) == 1


def test_paper_preset_composes(compose_config):
    c = compose_config(
        "table5", "+experiment=table5_paper", "train_corpus=custom", "data.path=x.jsonl"
    )
    assert (c.model.model_name_or_path, c.data.batch_size, c.trainer.max_epochs, c.model.lr) == (
        "bert-base-uncased",
        128,
        3,
        1e-5,
    )
    assert c.data.max_perplexity == 110 and c.sts.max_pairs_per_set is None


def test_each_job_is_a_wandb_run_with_its_sts_row(data_dir, compose_config, tmp_path, monkeypatch):
    """With ``WANDB_MODE`` unset a job writes an offline run: group table5, named for its corpus
    and seed, the STS numbers of ``results.json`` in its summary."""
    from wandb_records import read_offline_run

    monkeypatch.delenv("WANDB_MODE", raising=False)
    out = tmp_path / "runs" / "none" / "seed3"
    c = compose_config(
        "table5",
        "train_corpus=none",
        "seed=3",
        "sts.max_pairs_per_set=30",
        f"paths.data_dir={data_dir}",
        f"out_dir={out}",
    )
    res = run_job(c)
    (run_dir,) = (out / "wandb").glob("offline-run-*")
    rec = read_offline_run(run_dir)
    assert (rec["group"], rec["name"]) == ("table5", "none-seed3-sts")
    assert rec["summary"]["sts/avg/spearman"] == pytest.approx(res["sts"]["avg"]["spearman"])
    assert rec["summary"]["sts/STS14/spearman"] == pytest.approx(
        res["sts"]["years"]["STS14"]["spearman"]
    )
    assert rec["summary"]["signature"] == res["signature"]


def test_gatherers_share_one_command_line_and_refuse_an_empty_sweep(tmp_path):
    from paraamr.errors import DataNotFoundError
    from paraamr.tables.sweep import sweep_arguments

    with pytest.raises(DataNotFoundError, match=f"{tmp_path}: no results.json .*make table7"):
        sweep_arguments("table7", "fewshot", "n", ["--runs", str(tmp_path)])
    (tmp_path / "a").mkdir()
    record = {"job": "fewshot", "seed": 0, "signature": "s"}
    (tmp_path / "a" / "results.json").write_text(json.dumps(record))
    a, results = sweep_arguments("table7", "fewshot", "my note",
                                 ["--runs", str(tmp_path), "--no-wandb"])  # fmt: skip
    assert results == [{**record, "run_dir": str(tmp_path / "a")}]
    assert a.note == "my note" and a.out == "results/table7" and a.no_wandb
    with pytest.raises(DataNotFoundError, match="no results.json of a simcse job"):
        sweep_arguments("table5", "simcse", "n", ["--runs", str(tmp_path)])
