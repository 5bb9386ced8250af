"""``python -m paraamr.builder filter``: keep the paraphrases under a perplexity threshold and/or
at or above a similarity to their source (the builder's ``perplexity`` / ``similarity`` fields).

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
    f = sub.add_parser(
        "filter",
        help="keep paraphrases with perplexity <= --max-ppl and/or similarity >= --min-similarity",
    )
    f.add_argument("corpus")
    f.add_argument("output")
    f.add_argument("--max-ppl", type=float, help="largest perplexity kept")
    f.add_argument("--min-similarity", type=float, help="smallest similarity kept (a cosine)")
    a = ap.parse_args(argv)
    if a.cmd == "filter":
        from collections import Counter

        from paraamr.corpus.filters import filter_paraphrases
        from paraamr.utils import json_lines

        if a.max_ppl is None and a.min_similarity is None:
            ap.error("filter: give --max-ppl, --min-similarity or both")
        from paraamr.corpus.filters import ACCEPTABLE, similarity_floor

        if similarity_floor(a.min_similarity, "--min-similarity") == ACCEPTABLE:
            ap.error(
                "filter: --min-similarity takes a cosine here (Table 2 and the builder "
                "resolve 'acceptable')"
            )
        n_in, n_out, stats = 0, 0, Counter()

        def rows():
            nonlocal n_in
            for _, row in json_lines(a.corpus):
                n_in += 1
                yield row

        kept = filter_paraphrases(
            rows(), max_perplexity=a.max_ppl, min_similarity=a.min_similarity, stats=stats
        )
        with open(a.output, "w", encoding="utf-8") as dst:
            for r in kept:
                dst.write(json.dumps(r, ensure_ascii=False) + "\n")
                n_out += 1
        share = f" ({n_out / n_in:.1%})" if n_in else ""
        print(f"kept {n_out} of {n_in} sources{share}; dropped: {dict(stats)}", file=sys.stderr)


if __name__ == "__main__":
    main()
