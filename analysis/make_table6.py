"""Gather Table 6 jobs into ``table6.{md,csv,json}`` (mean ± std over seeds, paper rows beside),
``table6_bleu_ted.{png,pdf}`` and ``table6_curves.{png,pdf}``:
``python analysis/make_table6.py --runs results/table6/runs --out results/table6``."""

from __future__ import annotations

import argparse
from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.results import read_results
from paraamr.tables.table6 import gather_rows, plot_table6, render
from paraamr.training.curves import latest_metrics_csv, plot_curves


@cli_errors("python analysis/make_table6.py")
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="results/table6/runs")
    ap.add_argument("--out", default="results/table6")
    a = ap.parse_args(argv)
    scores = read_results(a.runs, "scpn")
    rows = gather_rows(scores)
    render(rows, a.out)
    figures = plot_table6(rows, Path(a.out) / "table6_bleu_ted")
    logs = {}
    for s in scores:  # each trained row's curves (seed 0 of each), one panel
        csv_log = latest_metrics_csv(s["run_dir"])
        if csv_log is not None and s.get("seed", 0) == 0:
            logs[f"{s['corpus']} ({s['input_format']})"] = csv_log
    if logs:
        figures += plot_curves(logs, Path(a.out) / "table6_curves", title="Table 6 training")
    print(Path(a.out, "table6.md").read_text(encoding="utf-8"))
    print("figures: " + ", ".join(str(p) for p in figures))


if __name__ == "__main__":
    main()
