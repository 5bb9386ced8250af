"""Benchmark: Table 2's pair scoring with 1 and with N worker processes for TED
(``metrics.workers``), on the same ParaBank-Eval pairs in one run.

    python benchmarks/bench_workers.py --out results/bench/workers.json [--workers 1 2]

spaCy parses and the MiniLM encoder (fp32) run in the main process either way (torch uses
``--threads``); only the tree edit distances go to the pool. Reports pairs/s per setting and
checks that every setting writes the same per-pair rows as the first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir", default=os.environ.get("PARAAMR_DATA", ROOT.parent / "shared" / "data")
    )
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--out", default="results/bench/workers.json")
    a = ap.parse_args(argv)
    import torch

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.bench_metrics import _pairs_from_parabank_eval
    from paraamr.corpus.records import Paraphrase, SourceRecord
    from paraamr.diversity.scoring import MetricConfig, score_records
    from paraamr.figures import save_benchmark
    from paraamr.metrics.semantic import load_encoder
    from paraamr.parsers.spacy_backend import SpacyParser
    from paraamr.signature import Signature

    torch.set_num_threads(a.threads)
    pairs = _pairs_from_parabank_eval(Path(a.data_dir), a.pairs)
    records: dict[str, SourceRecord] = {}
    for s, p in pairs:
        records.setdefault(s, SourceRecord(s, [])).paraphrases.append(Paraphrase(p))
    parser, encoder = SpacyParser(), load_encoder("minilm", "cpu")
    parser.parse(["Warm up ."])
    encoder.encode(["warm up"])
    runs, first = {}, None
    for w in a.workers:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            cfg = MetricConfig(chunk_size=10_000, workers=w)
            res = score_records(list(records.values()), parser=parser, encoder=encoder, cfg=cfg,
                                out_dir=tmp)  # fmt: skip
            seconds = time.perf_counter() - t0
            rows = sorted(x for f in Path(tmp).glob("*.pairs.jsonl") for x in f.open())
        first = rows if first is None else first
        rate = round(res.n_pairs / seconds, 2)
        runs[f"{w} worker(s)"] = {"workers": w, "pairs_per_s": rate, "seconds": round(seconds, 2),
                                  "same_rows": rows == first}  # fmt: skip
        print(w, json.dumps(runs[f"{w} worker(s)"]), flush=True)
    out = {"machine": {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads()},
           "pairs": len(pairs), "sources": len(records), "runs": runs}  # fmt: skip
    sig = Signature.build(("bench", "workers"), ("pairs", len(pairs)),
                          ("threads", torch.get_num_threads()))  # fmt: skip
    cases = {"Table 2 scoring": {k: r["pairs_per_s"] for k, r in runs.items()}}
    save_benchmark(a.out, out, cases, "pairs / s", sig)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
