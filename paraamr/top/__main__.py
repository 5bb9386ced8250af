"""``python -m paraamr.top stats --train FILE [--test FILE ...] [--out DIR]``."""

from __future__ import annotations

import argparse

from paraamr.corpus.errors import ON_ERROR
from paraamr.top.readers import FORMATS


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m paraamr.top", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("stats", help="template statistics of a training set")
    st.add_argument("--train", required=True, help="training trees (TOP v1 TSV, .seq or TOPv2)")
    st.add_argument("--test", action="append", default=[], help="evaluation file (repeatable)")
    st.add_argument("--format", choices=FORMATS, default=None, help="default: guessed per file")
    st.add_argument("--out", default="results/top", help="where the JSON and plot go")
    st.add_argument("--no-out", action="store_true", help="print only")
    st.add_argument("--top-k", type=int, default=10)
    st.add_argument("--allow-empty", action="store_true", help="accept empty spans ([SL:X ])")
    st.add_argument("--on-error", choices=ON_ERROR, default="raise")
    a = ap.parse_args(argv)
    if a.cmd == "stats":
        from paraamr.top.stats import run_stats

        run_stats(
            a.train,
            a.test,
            None if a.no_out else a.out,
            fmt=a.format,
            on_error=a.on_error,
            allow_empty=a.allow_empty,
            top_k=a.top_k,
        )


if __name__ == "__main__":
    main()
