"""Gather TOP runs into Tran & Tan's Tables 2-4 (:func:`paraamr.tables.top.write_top_tables`):
the paper's numbers beside ours (md, csv, json), figures, a W&B run in group ``top``.

    python analysis/make_top.py --runs 'results/top/runs/*/*/*/results.json' --out results/top

- Table 2 (data, AP filter, target parser, #samples, exact match): every ``full`` run;
- Table 3 (exact match by template frequency f >= 5, f < 5, f = 0): every ``full`` run;
- Table 4 (low-resource, mean ± std over subsamples): every ``low_resource`` run.

Runs of one configuration that differ only in the seed are pooled into one row.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.results import read_results
from paraamr.tables.top import write_top_tables


@cli_errors("python analysis/make_top.py")
def main(argv: list[str] | None = None) -> dict[str, Path]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", nargs="+", required=True,
                    help="the jobs' results.json files or run folders (globs allowed)")  # fmt: skip
    ap.add_argument("--out", default="results/top")
    ap.add_argument("--no-wandb", action="store_true")
    a = ap.parse_args(argv)
    paths = sorted({p for pat in a.runs for p in (glob.glob(pat) or [pat])})
    written = write_top_tables([r for p in paths for r in read_results(p, "top")], a.out,
                               wandb=not a.no_wandb)  # fmt: skip
    for name in ("table2", "table3", "table4"):
        print(written[name].read_text(encoding="utf-8"))
    print("figures:", ", ".join(str(p) for k, p in written.items() if k.endswith(".png")))
    return written


if __name__ == "__main__":
    main()
