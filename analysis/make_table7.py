"""Gather Table 7 runs: mean ± std over seeds, paired comparisons with the baselines, the paper's
rows beside ours (md, csv, json), each seed's paired difference (``table7_paired.{png,pdf}``)
and a W&B run holding the table (group ``table7``).

    python analysis/make_table7.py --runs results/table7/runs --out results/table7
"""

from __future__ import annotations

from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.tables.render import write_table
from paraamr.tables.sweep import log_to_wandb, sweep_arguments
from paraamr.tables.table7 import gather_rows, plot_paired_differences, table7_layout


def run_kind(results: list[dict]) -> str:
    """``paper settings`` when every run used bert-base-uncased on the hub's GLUE, else
    ``offline analogue``."""
    paper = all(
        "model:bert-base-uncased" in r["signature"] and "data:hub" in r["signature"]
        for r in results
    )
    return "paper settings" if paper else "offline analogue"


@cli_errors("python analysis/make_table7.py")
def main(argv: list[str] | None = None) -> dict:
    note = "offline analogue (MiniLM, shared GLUE files)"
    a, results = sweep_arguments("table7", "fewshot", note, argv, __doc__.split("\n")[0])
    rows = gather_rows(results)
    layout = table7_layout(a.note)
    kind = run_kind(results)
    sources = {r["task"]: r["sources"] for r in results}
    meta = {"run_kind": kind, "note": a.note, "test_sets": sources, "n_runs": len(results)}
    paths = write_table(layout, rows, Path(a.out), meta)
    sig = "\n".join(sorted({r["signature"] for r in results}))
    paths["figure"] = plot_paired_differences(results, Path(a.out) / "table7_paired", sig)[0]
    if not a.no_wandb:
        log_to_wandb(layout, rows, group="table7", directory=str(a.out), config={"note": a.note})
    print(paths["md"].read_text())
    return {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}}


if __name__ == "__main__":
    main()
