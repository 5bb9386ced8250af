"""``python -m paraamr.builder filter``: keep paraphrases under a perplexity threshold.

Merging shards and Table 1 are ``paraamr build-merge`` and ``paraamr table1`` (they write a
paper table, so they live above the builder)."""

from __future__ import annotations

import argparse
import json
import sys

from paraamr.errors import cli_errors


@cli_errors("python -m paraamr.builder")
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m paraamr.builder")
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("filter", help="keep paraphrases with perplexity <= --max-ppl")
    f.add_argument("corpus")
    f.add_argument("output")
    f.add_argument("--max-ppl", type=float, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "filter":
        from collections import Counter

        from paraamr.corpus.filters import filter_by_perplexity

        n_out, stats = 0, Counter()
        from paraamr.utils import json_lines

        rows = (row for _, row in json_lines(a.corpus))
        with open(a.output, "w", encoding="utf-8") as dst:
            for r in filter_by_perplexity(rows, a.max_ppl, stats):
                dst.write(json.dumps(r, ensure_ascii=False) + "\n")
                n_out += 1
        print(f"kept {n_out} sources; dropped: {dict(stats)}", file=sys.stderr)


if __name__ == "__main__":
    main()
