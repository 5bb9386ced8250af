"""``make gpu-check`` (benchmarks/gpu_check.py): one clear line without CUDA; every part runs
end to end with tiny models on the CPU, so the script is known to work before a GPU runs it."""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks.gpu_check import main


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_without_cuda_one_line_and_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["--out", str(tmp_path / "x.json")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpu-check: error: no CUDA device visible") and "\n" not in err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
def test_every_part_runs_with_tiny_models_on_cpu(tmp_path, data_dir):
    out = tmp_path / "gc.json"
    report = main(["--device", "cpu", "--tiny", "--repeats", "1", "--out", str(out),
                   "--data-dir", str(data_dir)])  # fmt: skip
    assert json.loads(out.read_text()) == report
    assert set(report["encode"]) == {"minilm", "bert-base-random"}
    assert set(report["builder"]) == {"stog_bart_large", "generator_t5_base", "lm_gpt2"}
    assert {"scpn_bart_base_fp32", "top_bart_base_fp32", "simcse_bert_base_fp32"} <= set(
        report["train"]
    )
    for part in ("encode", "builder", "train"):
        for name, v in report[part].items():
            rate = v.get("pairs_per_s") or v.get("batched_items_per_s") or v.get("steps_per_s")
            assert rate and rate > 0, (part, name)
    assert report["builder"]["lm_gpt2"]["speedup"] == pytest.approx(
        report["builder"]["lm_gpt2"]["batched_items_per_s"]
        / report["builder"]["lm_gpt2"]["one_per_call_items_per_s"],
        rel=0.02,
    )
