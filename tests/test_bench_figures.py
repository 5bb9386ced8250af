"""Benchmark bar figures: the bars are the benchmark's own numbers (naive beside ours), and a
benchmark run writes its figure beside its JSON with its signature."""

from __future__ import annotations

import json

import pytest

from paraamr.figures import bar_figure, png_description


def _widths(fig) -> list[float]:
    return [round(b.get_width(), 6) for b in fig.axes[0].patches]


def test_metrics_bars_put_naive_beside_ours():
    from benchmarks.bench_metrics import bars

    out = {
        "ted": {
            "kernel_only": {"zss_pairs_per_s": 50.0, "edist_pairs_per_s": 9000.0},
            "with_conversion": {"zss_pairs_per_s": 40.0, "edist_pairs_per_s": 3000.0},
        },
        "end_to_end": {"parabank_like (ParaBank-Eval, ~13/source)": {
            "naive_pairs_per_s": 4.0, "ours_pairs_per_s": 120.0}},
    }  # fmt: skip
    cases = bars(out)
    assert list(cases) == ["TED kernel only", "TED with conversion", "Table 2, parabank_like"]
    fig = bar_figure(cases, "pairs / s", log=True)
    # bars are drawn variant by variant: every naive bar, then every ours bar
    assert _widths(fig) == [50.0, 40.0, 4.0, 9000.0, 3000.0, 120.0]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == list(cases)


def test_build_bars_and_a_missing_variant():
    from benchmarks.bench_build import bars

    res = {"stages": {"parse": {"one_per_call": {"items_per_s": 2.0},
                                "batched": {"items_per_s": 9.5}}}}  # fmt: skip
    assert bars(res) == {"parse": {"one per call": 2.0, "batched": 9.5}}
    fig = bar_figure({"a": {"x": 1.0, "y": 2.0}, "b": {"y": 3.0}}, "s")
    assert _widths(fig) == [1.0, 2.0, 3.0]  # "b" has no "x" bar


def test_scpn_benchmark_writes_its_figure_beside_its_json(tmp_path, data_dir):
    from benchmarks.bench_scpn import bars, main

    out = tmp_path / "scpn.json"
    args = ["--models", "tiny", "--variants", "fp32 full,frozen", "--steps", "1",
            "--sentences", "2", "--new-tokens", "4", "--repeats", "1"]  # fmt: skip
    main([*args, "--data-dir", str(data_dir), "--out", str(out)])
    res = json.loads(out.read_text())
    train = {r["variant"]: r["median_s_per_step"] for r in res["results"] if r["kind"] == "train"}
    assert bars(res) == {"tiny-gpt2": train} and set(train) == {"fp32 full", "frozen"}
    sig = png_description(tmp_path / "scpn.png")
    assert sig.startswith("bench:scpn|cpus:") and (tmp_path / "scpn.pdf").exists()


def test_lm_benchmark_runs_both_batchings_on_the_same_sentences(tmp_path, data_dir):
    from benchmarks.bench_lm import main
    from paraamr.testing.tiny_models import build_tiny_causal_lm

    lm = build_tiny_causal_lm(tmp_path / "lm")
    out = tmp_path / "lm.json"
    main(["--model", str(lm), "--n", "24", "--budgets", "256", "--data-dir", str(data_dir),
          "--out", str(out)])  # fmt: skip
    runs = json.loads(out.read_text())["runs"]
    base, budget = runs["fp32, 16 sentences per batch"], runs["fp32, 256 tokens per batch"]
    assert base["forward_passes"] == 2  # 24 sentences, 16 per batch
    assert budget["max_rel_diff_vs_baseline"] < 1e-4
    bf16 = runs["bf16, 16 sentences per batch"]
    assert bf16["precision"] == "bf16 autocast" and bf16["spearman_vs_baseline"] > 0.9
    assert png_description(tmp_path / "lm.png").startswith("bench:lm|")


def test_encoder_benchmark_compares_precisions_on_the_same_pairs(tmp_path, data_dir):
    from benchmarks.bench_encoder import main, source_mean_similarity

    out = tmp_path / "enc.json"
    main(["--sources", "6", "--repeats", "1", "--data-dir", str(data_dir), "--out", str(out)])
    res = json.loads(out.read_text())
    bf16 = res["runs"]["bf16 autocast"]
    assert set(res["runs"]) == {"fp32", "bf16 autocast", "onnx", "onnx int8", "openvino"}
    assert bf16["spearman_vs_fp32"] > 0.99
    for name in ("onnx", "openvino"):  # the same fp32 model exported: the same cosines
        assert res["runs"][name]["max_abs_diff_vs_fp32"] < 1e-5
    fp32 = res["runs"]["fp32"]["table2_similarity"]
    assert bf16["similarity_points_vs_fp32"] == pytest.approx(bf16["table2_similarity"] - fp32,
                                                              abs=1e-3)  # fmt: skip
    # the aggregation by hand: source a has cosines 0.2 and 0.4, source b 0.9
    pairs = [("a", "x"), ("a", "y"), ("b", "z")]
    assert source_mean_similarity(pairs, [0.2, 0.4, 0.9]) == pytest.approx(60.0)


def test_workers_benchmark_writes_the_same_rows_with_a_pool(tmp_path, data_dir):
    from benchmarks.bench_workers import main

    out = tmp_path / "w.json"
    main(["--pairs", "30", "--workers", "1", "2", "--data-dir", str(data_dir), "--out", str(out)])
    runs = json.loads(out.read_text())["runs"]
    assert [r["workers"] for r in runs.values()] == [1, 2]
    assert all(r["same_rows"] for r in runs.values())


def test_decode_benchmark_compares_the_two_decodings_on_the_same_items(train_amr, tmp_path,
                                                                      data_dir):  # fmt: skip
    """Five variants per stage on the tiny trained models, the four fp32 ones with the same
    answers, and fewer rows through the model when finished rows leave the batch (the parser's
    answer cap ends short sentences' graphs early)."""
    from benchmarks.bench_decode import main

    # answers up to 90 tokens: the answer cap (7 x sentence tokens + 10) then ends the graphs
    # of the shorter sentences first
    train_amr(tmp_path / "amr", "stages.parser.model.max_target_length=90")
    out = tmp_path / "decode.json"
    main(["--amr-model", str(tmp_path / "amr"), "--n", "6", "--big-batch", "4",
          "--data-dir", str(data_dir), "--out", str(out)])  # fmt: skip
    res = json.loads(out.read_text())
    for stage in ("parse", "generate"):
        runs = res["stages"][stage]
        assert list(runs) == ["model.generate, batch 16", "compact, batch 16",
                              "model.generate, batch 4", "compact, batch 4",
                              "compact, batch 4, bf16"]  # fmt: skip
        fp32 = [r for label, r in runs.items() if not label.endswith("bf16")]
        assert all(r["same_answers"] == 6 for r in fp32), runs
        # bf16 answers may differ from fp32's; what must hold is that they came from bf16 weights
        assert [r["weights"] for r in runs.values()] == ["float32"] * 4 + ["bfloat16"], runs
    for costs in ("step_ms", "step_ms_autocast", "step_ms_bf16"):
        assert set(res[costs]) == {"batch 1", "batch 16", "batch 64"}
    parse = res["stages"]["parse"]
    assert parse["compact, batch 4"]["model_rows"] < parse["model.generate, batch 4"]["model_rows"]
    assert png_description(tmp_path / "decode.png").startswith("bench:decode|")
