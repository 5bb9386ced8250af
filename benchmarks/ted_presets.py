"""Measurement: each TED preset's TED-3 / TED-F means on the ParaBank-Eval sample (Table 2's data).

    python benchmarks/ted_presets.py --out results/bench/ted_presets.json

The sources common to ParaNMT and ParaBank-1 in ParaBank-Eval are parsed once with the offline
parser (spaCy projection, as ``make table2``), paraphrases equal to their source are dropped, and
every preset of :data:`paraamr.metrics.ted.VARIANTS` scores the same pairs with Table 2's
aggregation (mean over a source's paraphrases, then over sources). The default preset is also
scored at other cut depths (``depth3`` = 1, 2) to show how the TED-3 scale depends on the cut.
TED time per preset (``ted_batch``, edist kernel, both depths, trees read once) is reported too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import mean

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.records import same_sentence
from paraamr.metrics.ted import VARIANTS, ted_batch
from paraamr.parsers.base import parse_unique


def _corpus_pairs(data_dir: str | None) -> dict[str, list[list[tuple[str, str]]]]:
    """Per corpus, per common source: the (source, paraphrase) sentence pairs Table 2 scores."""
    from paraamr.corpus.subset import common_subset
    from paraamr.datadir import resolve_data_dir
    from paraamr.tables.table2 import default_corpora, subset_stream

    specs = default_corpora(resolve_data_dir(data_dir))
    keys = common_subset(specs, progress=False)
    out = {}
    for spec in specs:
        out[spec.name] = [
            [(r.text, p.text) for p in r.paraphrases if not same_sentence(r.text, p.text)]
            for r in subset_stream(spec, keys, SkipLog("raise"))
        ]
    return out


def _means(sources: list[list[tuple[str, str]]], trees: dict, variant: str, depth3: int):
    """(TED-3 mean, TED-F mean, seconds in ted_batch) with Table 2's aggregation."""
    pairs = [(trees[s], trees[p]) for src in sources for s, p in src]
    start = time.perf_counter()
    values = ted_batch(pairs, depth3, variant)
    seconds = time.perf_counter() - start
    k, per3, perf = 0, [], []
    for src in sources:
        vals = values[k : k + len(src)]
        k += len(src)
        if vals:
            per3.append(mean(v[0] for v in vals))
            perf.append(mean(v[1] for v in vals))
    return mean(per3), mean(perf), seconds, len(pairs)


def measure(data_dir: str | None = None) -> dict:
    from paraamr.parsers.spacy_backend import SpacyParser

    corpora = _corpus_pairs(data_dir)
    parser = SpacyParser()
    sents = [x for srcs in corpora.values() for src in srcs for pair in src for x in pair]
    parsed = parse_unique(sents, parser)
    bad = [s for s, p in parsed.items() if not hasattr(p, "tree")]
    if bad:
        raise RuntimeError(f"{len(bad)} sentences not parsed, e.g. {bad[0]!r}")
    trees = {s: p.tree for s, p in parsed.items()}
    runs = [(v, 3) for v in VARIANTS] + [("paraamr", 1), ("paraamr", 2)]
    rows = []
    for name, srcs in corpora.items():
        for variant, depth3 in runs:
            t3, tf, seconds, n = _means(srcs, trees, variant, depth3)
            rows.append(
                {
                    "corpus": name,
                    "preset": VARIANTS[variant].describe(),
                    "depth3": depth3,
                    "n_sources": sum(1 for s in srcs if s),
                    "n_pairs": n,
                    "ted3": round(t3, 4),
                    "tedf": round(tf, 4),
                    "ted_pairs_per_s": round(n / seconds, 1),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"parser": parser.signature(), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="default: $PARAAMR_DATA or ../shared/data")
    ap.add_argument("--out", default=None, help="also write the JSON result here")
    args = ap.parse_args(argv)
    result = measure(args.data_dir)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
