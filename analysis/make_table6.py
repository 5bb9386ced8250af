"""Gather Table 6 jobs into ``table6.{md,csv,json}`` (mean ± std over seeds, paper rows beside):
``python analysis/make_table6.py --runs results/table6/runs --out results/table6``."""

from __future__ import annotations

import argparse
from pathlib import Path

from paraamr.errors import ParaAMRError
from paraamr.scpn.table6 import gather_rows, load_scores, render


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="results/table6/runs")
    ap.add_argument("--out", default="results/table6")
    a = ap.parse_args(argv)
    scores = load_scores(a.runs)
    if not scores:
        raise ParaAMRError(f"no scores.json under {a.runs}: run experiments/table6.py first")
    render(gather_rows(scores), a.out)
    print(Path(a.out, "table6.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
