"""Determinism across processes: the same inputs under different PYTHONHASHSEED values (set and
dict-of-str iteration orders change between them) give byte-identical outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCORE = """
import hashlib, sys
import numpy as np
from paraamr.corpus import SkipLog, read_corpus
from paraamr.parsers.gold import GoldParser
from paraamr.diversity.scoring import MetricConfig, score_records
from paraamr.tables.table2 import table2_row, corpus_dir

class ShaEncoder:  # deterministic whatever the hash seed
    def encode(self, sents, **kw):
        out = np.array([list(hashlib.sha256(s.encode()).digest()[:16]) for s in sents], float)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

inp, out = sys.argv[1], sys.argv[2]
score_records(read_corpus(inp), parser=GoldParser(), encoder=ShaEncoder(),
              cfg=MetricConfig(chunk_size=4), out_dir=corpus_dir(out, "c"), signature="det")
import json; json.dump(table2_row(out, "c", bootstrap=100, seed=5), open(out + "/row.json", "w"))
"""


def _gold_corpus(ptb_trees, path):
    from paraamr.metrics.trees import leaves, to_bracketed

    trees = [t for t in ptb_trees if 4 <= len(leaves(t)) <= 25][:36]
    with open(path, "w") as fh:
        for k in range(0, 36, 3):
            s, p1, p2 = trees[k : k + 3]
            paras = [
                {"para_text": " ".join(leaves(p)), "para_parse": to_bracketed(p)} for p in (p1, p2)
            ]
            fh.write(
                json.dumps(
                    {
                        "text": " ".join(leaves(s)),
                        "text_parse": to_bracketed(s),
                        "paraphrases": paras,
                    }
                )
                + "\n"
            )


def test_table2_scoring_is_identical_across_hash_seeds(ptb_trees, tmp_path):
    inp = tmp_path / "gold.jsonl"
    _gold_corpus(ptb_trees, inp)
    outs = []
    for seed in ("1", "2", "12345"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", SCORE, str(inp), str(out)], env=env, check=True)
        outs.append(out)
    files = ["row.json", *(str(p.relative_to(outs[0])) for p in outs[0].rglob("*.jsonl"))]
    assert len(files) == 3  # the row, the pairs and the sources
    for f in files:
        assert {(o / f).read_bytes() for o in outs} == {(outs[0] / f).read_bytes()}, f
    row = json.loads((outs[0] / "row.json").read_text())
    assert row["n_sources"] == 12 and row["n_pairs"] == 24
