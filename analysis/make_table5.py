"""Gather Table 5 runs: mean ± std over seeds beside the paper's numbers (md, csv, json), a plot of
per-year STS by corpus, and a W&B run holding the table.

    python analysis/make_table5.py --runs results/table5/runs --out results/table5
"""

from __future__ import annotations

from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.tables.render import write_table
from paraamr.tables.sweep import log_to_wandb, plot_grouped, sweep_arguments
from paraamr.tables.table5 import gather_rows, measured, table5_layout


@cli_errors("python analysis/make_table5.py")
def main(argv: list[str] | None = None) -> dict:
    note = "offline analogue (MiniLM, ParaBank-Eval / MSRP)"
    a, results = sweep_arguments("table5", "simcse", note, argv, __doc__.split("\n")[0])
    rows = gather_rows(results)
    years = list(rows[0]["per_year"])
    stamps, when = measured(results)
    layout = table5_layout(years, a.note, when)
    out = Path(a.out)
    kind = "offline analogue" if "offline" in a.note else "paper settings"
    paths = write_table(layout, rows, out, {"run_kind": kind, "note": a.note, "measured": stamps})
    plot = plot_grouped(
        rows,
        [f"{y}_spearman" for y in years],
        years,
        out / "table5_per_year",
        ylabel="Spearman ×100",
        title="STS by year, SimCSE trained on each corpus (mean ± std over seeds)",
    )
    if not a.no_wandb:
        log_to_wandb(layout, rows, group="table5", directory=str(out), config={"note": a.note})
    print(paths["md"].read_text())
    return {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}, "plot": str(plot[0])}


if __name__ == "__main__":
    main()
