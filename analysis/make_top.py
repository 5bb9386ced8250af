"""Gather TOP runs (``top.json`` of ``experiments/top.py``) into the layouts of Tran & Tan's
Tables 2-4, the paper's numbers beside ours (md, csv, json), a W&B run in group ``top``, and the
synthetic trees per template of each run for inspection.

    python analysis/make_top.py --runs results/top/runs/*/*/*/top.json --out results/top

- Table 2 (data, AP filter, target parser, #samples, exact match): every ``full`` run;
- Table 3 (exact match by template frequency f >= 5, f < 5, f = 0): every ``full`` run;
- Table 4 (low-resource, mean ± std over subsamples): every ``low_resource`` run.

Runs of one configuration that differ only in the seed (a Hydra multirun ``seed=0,1,2``) are
pooled into one row, mean ± std over every seed's training sets (:func:`pool_seeds`).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import shutil
from pathlib import Path

from paraamr.metrics.aggregate import mean_std
from paraamr.paper import PAPER_TOP_TABLE2, PAPER_TOP_TABLE3, PAPER_TOP_TABLE4
from paraamr.tables.sweep import plot_grouped

BUCKETS = ("f>=5", "f<5", "f=0")
KEYS = (("real", "Real"), ("real+syn", "+syn"))


def _fmt(x, nd=2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _label(run: dict) -> str:
    m = run["config"]["model"]["model_name_or_path"]
    return f"{Path(str(m)).name} ({run['name']})"


def _pm(d: dict) -> str:
    if d["mean"] is None:
        return "–"
    return _fmt(d["mean"]) if d["n"] < 2 else f"{d['mean']:.2f} ± {d['std']:.2f}"


def _stat(xs: list) -> dict:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"mean": None, "std": None, "n": 0}
    m, sd = mean_std(xs)
    return {"mean": m, "std": sd, "n": len(xs)}


def _without_nulls(cfg):
    """A config with its ``null`` settings left out, at every level: a run made before a setting
    existed (key absent) and one that leaves it at ``null`` are the same configuration.

    >>> _without_nulls({"model": {"lr": 1, "max_depth": None}, "x": [None]})
    {'model': {'lr': 1}, 'x': [None]}
    """
    if isinstance(cfg, dict):
        return {k: _without_nulls(v) for k, v in cfg.items() if v is not None}
    return cfg


def pool_seeds(runs: list[dict]) -> list[dict]:
    """One summary per configuration: ``top.json`` summaries whose configs differ only in
    ``seed``, ``out_dir`` and ``preset_for`` (a ``null`` setting and an absent one count as the
    same) are merged, their aggregates recomputed over all
    their training sets (one per seed in the ``full`` setting), ``seeds`` listing the seeds.

    >>> def run(seed, em):
    ...     r = {"exact_match": {k: {"overall": {"exact_match": em}} for k in ("real", "real+syn")},
    ...          "samples": {"real": 10, "real+syn": 12}}
    ...     return {"name": "w", "setting": "full", "runs": [r],
    ...             "config": {"seed": seed, "out_dir": f"o{seed}", "model": {"lr": 1}}}
    >>> (p,) = pool_seeds([run(0, 30.0), run(1, 40.0)])
    >>> p["seeds"], p["aggregate"]["real"]["overall"]
    ([0, 1], {'mean': 35.0, 'std': 7.0711, 'n': 2})
    """
    groups: dict[str, list[dict]] = {}
    for run in runs:
        cfg = {k: v for k, v in run["config"].items() if k not in ("seed", "out_dir", "preset_for")}
        groups.setdefault(json.dumps(_without_nulls(cfg), sort_keys=True, default=str), []).append(
            run
        )
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append({**members[0], "seeds": [members[0]["config"].get("seed")]})
            continue
        members = sorted(members, key=lambda r: r["config"].get("seed", 0))
        inner = [r for m in members for r in m["runs"]]
        agg = {}
        for key, _ in KEYS:
            buckets = inner[0]["exact_match"][key]
            agg[key] = {b: _stat([r["exact_match"][key][b]["exact_match"] for r in inner])
                        for b in buckets}  # fmt: skip
            agg[key]["samples"] = _stat([r["samples"][key] for r in inner])
        out.append({**members[0], "runs": inner, "aggregate": agg,
                    "seeds": [m["config"].get("seed") for m in members]})  # fmt: skip
    return out


def top_table2(runs: list[dict]) -> tuple[list[str], list[dict]]:
    md = [
        "# Table 2: exact match of the target parser, real vs real + synthetic",
        "",
        "| source | data | AP filter | target parser | #samples | exact match (%) |",
        "|---|---|---|---|---|---|",
    ]
    rows = []
    for run in runs:
        name = _label(run)
        for key, shown in KEYS:
            a = run["aggregate"][key]
            ap = name if key == "real+syn" else ""
            gain = ""
            if key == "real+syn" and a["overall"]["mean"] is not None:
                base = run["aggregate"]["real"]["overall"]["mean"]
                gain = f" ({a['overall']['mean'] - base:+.2f})" if base is not None else ""
            md.append(
                f"| ours | {shown} | {ap} | {name} | {a['samples']['mean']:,.0f} | "
                f"{_pm(a['overall'])}{gain} |"
            )
            rows.append(
                {
                    "source": "ours",
                    "run": run["name"],
                    "data": shown,
                    "ap_filter": ap,
                    "target_parser": name,
                    "samples": a["samples"]["mean"],
                    "exact_match": a["overall"]["mean"],
                    "exact_match_std": a["overall"]["std"],
                }
            )
    for setting, n_i, acc_i in (("−", 3, 4), ("+", 5, 6)):
        for row in PAPER_TOP_TABLE2:
            data, ap, tgt, n, acc = row[0], row[1], row[2], row[n_i], row[acc_i]
            md.append(
                f"| paper ({setting} UNSUPPORTED) | {data} | {ap or ''} | {tgt} | {n:,} | "
                f"{acc:.2f} |"
            )
            rows.append(
                {
                    "source": "paper",
                    "setting": f"{setting}UNSUPPORTED",
                    "data": data,
                    "ap_filter": ap,
                    "target_parser": tgt,
                    "samples": n,
                    "exact_match": acc,
                }
            )
    return md, rows


def top_table3(runs: list[dict]) -> tuple[list[str], list[dict]]:
    md = [
        "# Table 3: exact match by the test template's frequency f in training",
        "",
        "| source | training data | f ≥ 5 | f < 5 | f = 0 |",
        "|---|---|---|---|---|",
    ]
    rows = []
    for run in runs:
        vals = {}
        for key, shown in KEYS:
            a = run["aggregate"][key]
            vals[key] = [a[b]["mean"] for b in BUCKETS]
            md.append(
                f"| ours: {_label(run)} | {shown} | "
                + " | ".join(_pm(a[b]) for b in BUCKETS)
                + " |"
            )
            rows.append(
                {
                    "source": "ours",
                    "run": run["name"],
                    "data": shown,
                    **dict(zip(BUCKETS, vals[key], strict=True)),
                }
            )
        delta = [
            None if a is None or b is None else b - a
            for a, b in zip(vals["real"], vals["real+syn"], strict=True)
        ]
        md.append(
            f"| ours: {_label(run)} | ∆ | "
            + " | ".join("–" if x is None else f"{x:+.2f}" for x in delta)
            + " |"
        )
    for shown, accs in PAPER_TOP_TABLE3.items():
        md.append(f"| paper (BART) | {shown} | " + " | ".join(f"{x:.2f}" for x in accs) + " |")
        rows.append({"source": "paper", "data": shown, **dict(zip(BUCKETS, accs, strict=True))})
    r, s = PAPER_TOP_TABLE3["Real"], PAPER_TOP_TABLE3["+syn"]
    md.append(
        "| paper (BART) | ∆ | "
        + " | ".join(f"{b - a:+.2f}" for a, b in zip(r, s, strict=True))
        + " |"
    )
    return md, rows


def top_table4(runs: list[dict]) -> tuple[list[str], list[dict]]:
    md = [
        "# Table 4: low-resource setting (one utterance per training template)",
        "",
        "Mean ± std over subsamples (the paper: 5; ours: the `n` column).",
        "",
        "| source | training data | #samples | n | exact match (%) |",
        "|---|---|---|---|---|",
    ]
    rows = []
    for run in runs:
        for key, shown in KEYS:
            a = run["aggregate"][key]
            md.append(
                f"| ours: {_label(run)} | {shown} | {a['samples']['mean']:,.0f} | "
                f"{a['overall']['n']} | {_pm(a['overall'])} |"
            )
            rows.append(
                {
                    "source": "ours",
                    "run": run["name"],
                    "data": shown,
                    "samples": a["samples"]["mean"],
                    "n": a["overall"]["n"],
                    "exact_match": a["overall"]["mean"],
                    "exact_match_std": a["overall"]["std"],
                }
            )
    for shown, (n, mean, pm) in PAPER_TOP_TABLE4.items():
        md.append(f"| paper (BART) | {shown} | {n:,} | 5 | {mean:.2f} ± {pm:.2f} |")
        rows.append(
            {
                "source": "paper",
                "data": shown,
                "samples": n,
                "n": 5,
                "exact_match": mean,
                "exact_match_std": pm,
            }
        )
    return md, rows


def _notes(runs: list[dict]) -> list[str]:
    out = ["", "Runs:", ""]
    for run in runs:
        for r in run["runs"]:
            g = r["generation"]
            f = r["filter"] or {}
            out.append(
                f"- {r['name']}: train {r['train']:,} trees, {r['templates']:,} templates, test "
                f"{r['test']:,}; generated {g['requested']:,}, invalid {g['invalid']:,} "
                f"{g['invalid_by_kind']}, duplicates of train {g['duplicate_of_train']:,}, "
                f"AP kept {f.get('kept', r['synthetic_kept']):,}; signature "
                f"`{r['signature']['parser']}`"
            )
    for run in runs:
        seeds = run.get("seeds") or []
        if len(seeds) > 1:
            out.append(f"- {run['name']} ({run['setting']}): mean ± std over seeds {seeds}")
    models = sorted({str(r["config"]["model"]["model_name_or_path"]) for r in runs})
    offline = [m for m in models if m in ("minilm", "smollm2")]
    if offline:
        out += [
            "",
            f"Offline analogue ({', '.join(offline)}, CPU step budget, other data sizes): "
            "compare our rows with each other, not with the paper's values.",
        ]
    return out


def plot_buckets(runs: list[dict], out: Path) -> list[Path]:
    """``top_buckets_<name>.{png,pdf}`` per pooled run: exact match of Real and +syn overall
    and per frequency bucket (mean, error bars: std over seeds or subsamples)."""
    paths = []
    metrics = ("overall", *BUCKETS)
    for run in runs:
        rows = []
        for key, shown in KEYS:
            a = run["aggregate"][key]
            row = {"dataset": shown}
            for b in metrics:
                row[f"{b}_mean"] = a[b]["mean"] if a[b]["mean"] is not None else 0.0
                row[f"{b}_std"] = a[b]["std"] or 0.0
            rows.append(row)
        seeds = run.get("seeds") or []
        title = f"{_label(run)}, {run['setting']}" + (f", seeds {seeds}" if len(seeds) > 1 else "")
        stem = out / f"top_buckets_{run['name']}_{run['setting']}"
        sig = run["runs"][0].get("signature", {}).get("parser", "")
        paths += plot_grouped(rows, metrics, list(metrics), stem, ylabel="exact match (%)",
                              title=title, signature=sig)  # fmt: skip
    return paths


def write(name: str, md: list[str], rows: list[dict], runs: list[dict], out: Path) -> None:
    (out / f"{name}.md").write_text("\n".join(md + _notes(runs)) + "\n", encoding="utf-8")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    (out / f"{name}.json").write_text(json.dumps({"rows": rows}, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> dict[str, Path]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", nargs="+", required=True, help="top.json files (globs allowed)")
    ap.add_argument("--out", default="results/top")
    ap.add_argument("--no-wandb", action="store_true")
    a = ap.parse_args(argv)
    paths = sorted({p for pat in a.runs for p in (glob.glob(pat) or [pat])})
    runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    pooled = pool_seeds(runs)
    if not runs:
        raise SystemExit("no top.json given: run experiments/top.py first")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    full = [r for r in pooled if r["setting"] == "full"]
    low = [r for r in pooled if r["setting"] == "low_resource"]
    written = {}
    for name, fn, sel in (
        ("table2", top_table2, full),
        ("table3", top_table3, full),
        ("table4", top_table4, low),
    ):
        md, rows = fn(sel)
        write(name, md, rows, sel, out)
        written[name] = out / f"{name}.md"
    figures = plot_buckets(pooled, out)
    for path, run in zip(paths, runs, strict=True):
        for r in run["runs"]:
            work = Path(r.get("work") or Path(path).parent / r["name"].split("-")[-1])
            if (work / "samples.md").exists():
                shutil.copyfile(work / "samples.md", out / f"samples_{r['name']}.md")
    if not a.no_wandb:
        from paraamr.tracking import log_table, wandb_run

        with wandb_run(
            project="paraamr",
            group="top",
            name="top-tables",
            config={"runs": paths},
            directory=str(out),
        ) as run:
            for name in ("table2", "table3", "table4"):
                rows = json.loads((out / f"{name}.json").read_text())["rows"]
                cols = list(dict.fromkeys(k for r in rows for k in r))
                log_table(run, name, cols, [[r.get(c) for c in cols] for r in rows])
    for p in written.values():
        print(p.read_text(encoding="utf-8"))
    print("figures:", ", ".join(str(f) for f in figures))
    return {**written, **{f.name: f for f in figures}}


if __name__ == "__main__":
    main()
