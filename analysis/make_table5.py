"""Gather Table 5 runs: mean ± std over seeds beside the paper's numbers (md, csv, json), a plot of
per-year STS by corpus, and a W&B run holding the table.

    python analysis/make_table5.py --runs results/table5/runs --out results/table5
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from paraamr.paper import PAPER_TABLE5
from paraamr.tables.table5 import gather_rows, load_results
from paraamr.tracking import log_table, wandb_run


def write_tables(rows: list[dict], out: Path, note: str) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f"table5.{k}" for k in ("md", "csv", "json")}
    years = list(rows[0]["per_year"]) if rows else []
    md = [
        f"# Table 5: {note}",
        "",
        "Average STS12-16 Pearson / Spearman ×100 of SimCSE trained on each corpus "
        "(mean ± std over seeds; SentEval 'all' setting, cosine).",
        "",
        "| dataset | source | seeds | Pearson | Spearman | "
        + " | ".join(f"{y} ρ" for y in years)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(years),
    ]
    for r in rows:
        per = " | ".join(f"{r['per_year'][y]['spearman_mean']:.2f}" for y in years)
        md.append(
            f"| {r['dataset']} | ours ({note}) | {r['n_seeds']} | "
            f"{r['pearson_mean']:.2f} ± {r['pearson_std']:.2f} | "
            f"{r['spearman_mean']:.2f} ± {r['spearman_std']:.2f} | {per} |"
        )
    for name, (p, s) in PAPER_TABLE5.items():
        md.append(
            f"| {name} | paper (bert-base-uncased, 5 seeds) | 5 | {p:.2f} | {s:.2f} | "
            + " | ".join("–" for _ in years)
            + " |"
        )
    md += ["", "Signatures:", ""] + [f"- {r['dataset']}: `{r['signature']}`" for r in rows]
    if "offline" in note:
        md += [
            "",
            "Offline analogue: another encoder, other corpora and a small step budget; "
            "compare rows with each other, not with the paper's absolute values.",
        ]
    paths["md"].write_text("\n".join(md) + "\n", encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "source",
                "dataset",
                "n_seeds",
                "pearson_mean",
                "pearson_std",
                "spearman_mean",
                "spearman_std",
                *(f"{y}_spearman_mean" for y in years),
            ]
        )
        for r in rows:
            w.writerow(
                [
                    "ours",
                    r["dataset"],
                    r["n_seeds"],
                    r["pearson_mean"],
                    r["pearson_std"],
                    r["spearman_mean"],
                    r["spearman_std"],
                    *(r["per_year"][y]["spearman_mean"] for y in years),
                ]
            )
        for name, (p, s) in PAPER_TABLE5.items():
            w.writerow(["paper", name, 5, p, None, s, None])
    paths["json"].write_text(
        json.dumps(
            {
                "rows": rows,
                "paper": [
                    {"dataset": k, "pearson_mean": p, "spearman_mean": s}
                    for k, (p, s) in PAPER_TABLE5.items()
                ],
                "note": note,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return paths


def plot_per_year(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    years = list(rows[0]["per_year"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        xs = [j + i * width for j in range(len(years))]
        ax.bar(
            xs,
            [r["per_year"][y]["spearman_mean"] for y in years],
            width,
            yerr=[r["per_year"][y]["spearman_std"] for y in years],
            label=r["dataset"],
        )
    ax.set_xticks([j + width * (len(rows) - 1) / 2 for j in range(len(years))], years)
    ax.set_ylabel("Spearman ×100")
    lo = min(r["per_year"][y]["spearman_mean"] for r in rows for y in years)
    ax.set_ylim(max(0, lo - 10), 100)
    ax.legend(fontsize=8, ncol=len(rows))
    ax.set_title("STS by year, SimCSE trained on each corpus (mean ± std over seeds)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="results/table5/runs")
    ap.add_argument("--out", default="results/table5")
    ap.add_argument("--note", default="offline analogue (MiniLM, ParaBank-Eval / MSRP)")
    ap.add_argument("--no-wandb", action="store_true")
    a = ap.parse_args(argv)
    results = load_results(a.runs)
    if not results:
        raise SystemExit(f"no results.json under {a.runs}: run the sweep first (make table5)")
    rows = gather_rows(results)
    out = Path(a.out)
    paths = write_tables(rows, out, a.note)
    plot = plot_per_year(rows, out / "table5_per_year.png")
    if not a.no_wandb:
        cols = [
            "dataset",
            "source",
            "n_seeds",
            "pearson_mean",
            "pearson_std",
            "spearman_mean",
            "spearman_std",
        ]
        data = [
            [
                r["dataset"],
                "ours",
                r["n_seeds"],
                r["pearson_mean"],
                r["pearson_std"],
                r["spearman_mean"],
                r["spearman_std"],
            ]
            for r in rows
        ]
        data += [[k, "paper", 5, p, None, s, None] for k, (p, s) in PAPER_TABLE5.items()]
        with wandb_run(
            project="paraamr",
            group="table5",
            name="table5-summary",
            config={"note": a.note},
            directory=str(out),
        ) as run:
            log_table(run, "table5", cols, data)
    print(paths["md"].read_text())
    return {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}, "plot": str(plot)}


if __name__ == "__main__":
    main()
