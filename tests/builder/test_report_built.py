"""``analysis/report_built.py`` on a hand-made ``make corpus-offline`` folder: every number
checked against a hand count."""

from __future__ import annotations

import json
import os

import pytest

from analysis.report_built import main


def _build(folder, records, rejects, summary_counts, table1):
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "corpus.rejects.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rejects))
    (folder / "build_summary.json").write_text(
        json.dumps({"counts": summary_counts, "table1": table1})
    )


def test_report_counts_by_hand(tmp_path, capsys):
    t1 = {"avg_paraphrases": 1.5, "avg_source_length": 3.0, "avg_paraphrase_length": 4.0}
    para = [{"para_text": "a b c d", "perplexity": 50.0}, {"para_text": "b c", "perplexity": 130}]
    _build(tmp_path / "s" / "all",
           [{"text": "x y z", "paraphrases": para},
            {"text": "u v w", "paraphrases": [{"para_text": "w v", "perplexity": 121.0}]}],
           [{"line": 3, "text": "q", "stage": "refocus", "reason": "r"}],
           {"items": 3, "records": 2, "paraphrases": 3}, t1)  # fmt: skip
    _build(tmp_path / "s" / "top",
           [{"text": "x y z", "paraphrases": [{"para_text": "z y x", "perplexity": 10.0}]}],
           [{"line": 2, "text": "u v w", "stage": "postprocess", "reason": "r"},
            {"line": 3, "text": "q", "stage": "parse", "reason": "r"}],
           {"items": 3, "records": 1, "paraphrases": 1}, t1)  # fmt: skip
    rows = [{"dataset": "ParaNMT", "ted3": 3.0, "similarity": 80.0},
            {"dataset": "ParaAMR-built", "ted3": 6.0, "similarity": 50.0},
            {"dataset": "ParaAMR-built-no-refocus", "ted3": 5.0, "similarity": 52.0}]  # fmt: skip
    (tmp_path / "table2-s").mkdir()
    (tmp_path / "table2-s" / "table2.json").write_text(json.dumps({"rows": rows}))
    out = main(["--built", str(tmp_path), "--max-ppl", "120"])["s"]
    a, t = out["builds"]["all"], out["builds"]["top"]
    assert a["with_paraphrase"] == 2 and a["with_paraphrase_share"] == pytest.approx(2 / 3, 1e-3)
    assert a["ppl_filter"]["paraphrases"] == 1 and a["ppl_filter"]["sources"] == 1  # 50 only
    assert a["rejects"] == {"refocus": 1} and t["rejects"] == {"parse": 1, "postprocess": 1}
    assert out["checks"] == {"ted3_ratio_to_ParaNMT": 2.0, "ted3_minus_round_trip": 1.0,
                             "similarity": 50.0, "similarity_round_trip": 52.0}  # fmt: skip
    text = capsys.readouterr().out
    assert "| re-focused | 3 | 2 (66.7%) | 1.50 |" in text and "1 of 3 (1 sources)" in text
    paired = {"metrics": {"ted3": {"difference": 1.0, "ci95": [-0.2, 2.1]},
                          "similarity": {"difference": -2.0, "ci95": [-4.0, 0.5]}}}  # fmt: skip
    (tmp_path / "table2-s" / "paired-refocus.json").write_text(json.dumps(paired))
    checks = main(["--built", str(tmp_path)])["s"]["checks"]
    assert checks["ted3_minus_round_trip_ci95"] == [-0.2, 2.1]
    assert checks["similarity_minus_round_trip_ci95"] == [-4.0, 0.5]
    table = tmp_path / "table2-s" / "table2.json"
    os.utime(table, ns=(table.stat().st_atime_ns, (tmp_path / "table2-s" / "paired-refocus.json")
                        .stat().st_mtime_ns + 10**9))  # fmt: skip
    checks = main(["--built", str(tmp_path)])["s"]["checks"]  # Table 2 rerun since: stale
    assert "ted3_minus_round_trip_ci95" not in checks and checks["ted3_minus_round_trip"] == 1.0


def test_an_empty_folder_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--built", str(tmp_path)])
    assert e.value.code == 2
    assert "no build folder" in capsys.readouterr().err


def _shard(folder, k, n, records, rejects, done=True):
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"shard-{k:05d}-of-{n:05d}"
    tail = "" if done else ".partial"
    (folder / f"{stem}.records.jsonl{tail}").write_text(
        "".join(json.dumps(r) + "\n" for r in records))  # fmt: skip
    (folder / f"{stem}.rejects.jsonl{tail}").write_text(
        "".join(json.dumps(r) + "\n" for r in rejects))  # fmt: skip
    counts = {"items": len(records) + len(rejects), "records": len(records),
              "paraphrases": sum(len(r["paraphrases"]) for r in records)}  # fmt: skip
    (folder / f"{stem}.progress.json").write_text(
        json.dumps({"done": done, "shard": k, "num_shards": n, "counts": counts}))  # fmt: skip


def test_an_unmerged_build_is_reported_from_its_finished_shards(tmp_path, capsys):
    """Shard 0 of 2 finished, shard 1 still running: the report counts shard 0 alone, says
    so, computes its Table 1 from the records, and finds a Table 2 of part of the build."""
    para = [{"para_text": "a b c d", "perplexity": 50.0}, {"para_text": "b c", "perplexity": 130}]
    _shard(tmp_path / "s" / "all", 0, 2,
           [{"text": "x y z", "paraphrases": para},
            {"text": "u v", "paraphrases": [{"para_text": "w", "perplexity": 20.0}]}],
           [{"line": 5, "text": "q", "stage": "refocus", "reason": "r"}])  # fmt: skip
    _shard(tmp_path / "s" / "all", 1, 2,
           [{"text": "p", "paraphrases": [{"para_text": "p p", "perplexity": 1.0}]}], [],
           done=False)  # fmt: skip
    _build(tmp_path / "s" / "top",
           [{"text": "x y z", "paraphrases": [{"para_text": "z y x", "perplexity": 10.0}]}],
           [], {"items": 1, "records": 1, "paraphrases": 1},
           {"avg_paraphrases": 1.0, "avg_source_length": 3.0,
            "avg_paraphrase_length": 3.0})  # fmt: skip
    rows = [{"dataset": "ParaNMT", "ted3": 4.0, "similarity": 80.0},
            {"dataset": "ParaAMR-built", "ted3": 6.0, "similarity": 50.0},
            {"dataset": "ParaAMR-built-no-refocus", "ted3": 5.5, "similarity": 52.0}]  # fmt: skip
    (tmp_path / "table2-s-quarter").mkdir()
    (tmp_path / "table2-s-quarter" / "table2.json").write_text(json.dumps({"rows": rows}))
    out = main(["--built", str(tmp_path)])["s"]
    a = out["builds"]["all"]
    assert a["built_from"] == "shard 0 of 2" and out["builds"]["top"]["built_from"] == "merged"
    assert (a["items"], a["with_paraphrase"], a["paraphrases"]) == (3, 2, 3)  # shard 1: not yet
    # Table 1 by hand: 2 sources, 3 paraphrases; words 3 + 2 sources, 4 + 2 + 1 paraphrases
    assert a["table1"]["instances"] == 2 and a["table1"]["avg_paraphrases"] == 1.5
    assert a["table1"]["avg_source_length"] == pytest.approx(2.5)
    assert a["table1"]["avg_paraphrase_length"] == pytest.approx(7 / 3)
    assert a["ppl_filter"]["paraphrases"] == 2 and a["ppl_filter"]["sources"] == 2
    assert a["rejects"] == {"refocus": 1}
    assert out["table2"].endswith("table2-s-quarter/table2.json")
    assert (
        out["checks"]["ted3_ratio_to_ParaNMT"] == 1.5
        and out["checks"]["ted3_minus_round_trip"] == 0.5
    )
    assert "| re-focused (shard 0 of 2) | 3 | 2 (66.7%) | 1.50 |" in capsys.readouterr().out


def _run(folder, share_items, ted3s):
    """A BUILT folder with set ``s``: the re-focused build has ``share_items`` = (records,
    items); Table 2's ParaNMT / built / round-trip TED-3 ``ted3s`` (``None``: no Table 2)."""
    t1 = {"avg_paraphrases": 1.0, "avg_source_length": 1.0, "avg_paraphrase_length": 1.0}
    rec = [{"text": "x", "paraphrases": [{"para_text": "y", "perplexity": 1.0}]}]
    records, items = share_items
    for policy in ("all", "top"):
        _build(folder / "s" / policy, rec * records, [],
               {"items": items, "records": records, "paraphrases": records}, t1)  # fmt: skip
    if ted3s is not None:
        names = ("ParaNMT", "ParaAMR-built", "ParaAMR-built-no-refocus")
        rows = [{"dataset": n, "ted3": t, "similarity": 50.0 + t}
                for n, t in zip(names, ted3s, strict=True)]  # fmt: skip
        (folder / "table2-s").mkdir()
        (folder / "table2-s" / "table2.json").write_text(json.dumps({"rows": rows}))


def test_several_runs_side_by_side_by_hand(tmp_path, capsys):
    """Two seeds' folders: each check per run, then mean / lowest / highest by hand; a third
    run without a Table 2 shows its share of sources but no checks; a folder named twice is
    a one-line error."""
    a, b, c = tmp_path / "seed0", tmp_path / "seed1", tmp_path / "seed2"
    _run(a, (3, 4), (4.0, 6.0, 5.0))  # ratio 1.5, +1.0, similarity 56.0, share 0.75
    _run(b, (4, 4), (5.0, 6.0, 5.5))  # ratio 1.2, +0.5, similarity 56.0, share 1.0
    _run(c, (1, 4), None)
    out = main(["--built", str(a), "--built", str(b), "--built", str(c)])
    assert set(out["runs"]) == {str(a), str(b), str(c)}
    across = out["across"]["s"]
    assert across["ted3_ratio_to_ParaNMT"] == {str(a): 1.5, str(b): 1.2, "mean": 1.35,
                                               "min": 1.2, "max": 1.5}  # fmt: skip
    assert across["ted3_minus_round_trip"]["mean"] == 0.75
    assert across["similarity"]["mean"] == 56.0
    share = across["with_paraphrase_share"]
    assert (share[str(c)], share["mean"], share["min"]) == (0.25, round(2 / 3, 4), 0.25)
    text = capsys.readouterr().out
    assert f"## {a}" in text and "## side by side" in text
    assert "| s | ted3_ratio_to_ParaNMT | 1.5 | 1.2 | – | 1.35 | 1.2 | 1.5 |" in text
    with pytest.raises(SystemExit) as e:
        main(["--built", str(a), "--built", str(a)])
    assert e.value.code == 2 and "named twice" in capsys.readouterr().err
