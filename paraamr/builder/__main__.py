"""``python -m paraamr.builder {merge,table1,filter}``: the cheap steps after building."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m paraamr.builder")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge finished shards into corpus.jsonl + Table 1 stats")
    m.add_argument("--out", required=True)
    m.add_argument("--num-shards", type=int, required=True)
    t = sub.add_parser("table1", help="Table 1 statistics of a corpus (canonical JSON lines)")
    t.add_argument("corpus")
    f = sub.add_parser("filter", help="keep paraphrases with perplexity <= --max-ppl")
    f.add_argument("corpus")
    f.add_argument("output")
    f.add_argument("--max-ppl", type=float, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "merge":
        from paraamr.builder.run import finish_build

        finish_build(a.out, a.num_shards)
    elif a.cmd == "table1":
        from paraamr.builder.stats import table1_stats
        from paraamr.tables.table1 import render_table1

        with open(a.corpus, encoding="utf-8") as fh:
            stats = table1_stats(json.loads(line) for line in fh)
        print(render_table1(Path(a.corpus).name, stats, a.corpus))
        json.dump(stats, sys.stdout, indent=2)
    else:
        from collections import Counter

        from paraamr.corpus.filters import filter_by_perplexity

        n_out, stats = 0, Counter()
        with open(a.corpus, encoding="utf-8") as src, open(a.output, "w", encoding="utf-8") as dst:
            rows = (json.loads(line) for line in src)
            for r in filter_by_perplexity(rows, a.max_ppl, stats):
                dst.write(json.dumps(r, ensure_ascii=False) + "\n")
                n_out += 1
        print(f"kept {n_out} sources; dropped: {dict(stats)}", file=sys.stderr)


if __name__ == "__main__":
    main()
