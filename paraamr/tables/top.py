"""The TOP tables: TOP runs (the job records, ``results.json``, of ``experiments/top.py``) in
the layouts of Tran & Tan's Tables 2-4, the paper's numbers beside ours (md, csv, json), a W&B
run in group ``top``, and the synthetic trees per template of each run for inspection
(:func:`write_top_tables`; the command: ``analysis/make_top.py``).

- Table 2 (data, AP filter, target parser, #samples, exact match): every ``full`` run;
- Table 3 (exact match by template frequency f >= 5, f < 5, f = 0): every ``full`` run;
- Table 4 (low-resource, mean ± std over subsamples): every ``low_resource`` run.

Runs of one configuration that differ only in the seed (a Hydra multirun ``seed=0,1,2``) are
pooled into one row, mean ± std over every seed's training sets (:func:`pool_seeds`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paraamr.metrics.aggregate import mean_std
from paraamr.paper import PAPER_TOP_TABLE2, PAPER_TOP_TABLE3, PAPER_TOP_TABLE4
from paraamr.signature import Signature, config_digest
from paraamr.tables.render import Column, Layout, write_table
from paraamr.tables.sweep import plot_grouped, split_settings

__all__ = ["write_top_tables", "pool_seeds", "top_table2", "top_table3", "top_table4",
           "plot_buckets", "BUCKETS"]  # fmt: skip

BUCKETS = ("f>=5", "f<5", "f=0")
KEYS = (("real", "Real"), ("real+syn", "+syn"))


def _label(run: dict) -> str:
    m = run["config"]["model"]["model_name_or_path"]
    return f"{Path(str(m)).name} ({run['name']})"


def _stat(xs: list) -> dict:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"mean": None, "std": None, "n": 0}
    m, sd = mean_std(xs)
    return {"mean": m, "std": sd, "n": len(xs)}


def _signature(run: dict) -> str:
    """A TOP record's signature with its ``config`` field, the digest of the whole
    configuration (:func:`paraamr.signature.config_digest`), computed here from the record's
    config where a record has none."""
    sig = Signature(run.get("signature") or "")
    if "config" not in sig.fields:
        sig = Signature.build(*sig.fields.items(), ("config", config_digest(run["config"])))
    return sig


def pool_seeds(runs: list[dict]) -> list[dict]:
    """One summary per setting: job records whose signatures differ only in ``seed:N`` (the
    signature names the whole configuration but seed, output folder and machine paths:
    :func:`_signature`) are merged, their aggregates recomputed over all their training sets
    (one per seed in the ``full`` setting), ``seeds`` listing the seeds. Records of one name and
    setting that differ in more are split as :func:`~paraamr.tables.sweep.split_settings` splits
    a sweep's rows, each named by what its signature has that the others lack.

    >>> def run(seed, em, lr=1):
    ...     r = {"exact_match": {k: {"overall": {"exact_match": em}} for k in ("real", "real+syn")},
    ...          "samples": {"real": 10, "real+syn": 12}}
    ...     return {"name": "w", "setting": "full", "runs": [r], "signature": f"top:parser|lr:{lr}",
    ...             "config": {"seed": seed, "out_dir": f"o{seed}", "model": {"lr": lr}}}
    >>> (p,) = pool_seeds([run(0, 30.0), run(1, 40.0)])
    >>> p["seeds"], p["aggregate"]["real"]["overall"]
    ([0, 1], {'mean': 35.0, 'std': 7.0711, 'n': 2})
    >>> [(p["name"][-6:], p["seeds"]) for p in pool_seeds([run(0, 30.0), run(1, 40.0, 2)])]
    [(' lr:1]', [0]), (' lr:2]', [1])]
    """
    by_name: dict[tuple, list[dict]] = {}
    for run in runs:
        with_config = {**run, "signature": _signature(run)}
        by_name.setdefault((run["name"], run["setting"]), []).append(with_config)
    groups = [
        [{**r, "name": label} for r in members]
        for (name, _), records in by_name.items()
        for label, members in split_settings(name, records)
    ]
    out = []
    for members in groups:
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


def _kind(runs: list[dict]) -> str:
    """``paper models`` only when every run trained the paper's BART (``model=top_bart``)."""
    models = {str(r["config"]["model"]["model_name_or_path"]) for r in runs}
    return "paper models" if models == {"facebook/bart-base"} else "offline analogue"


def _columns(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    """Columns from ``(key, header, fmt)`` triples."""
    return tuple(Column(k, h, fmt=f) for k, h, f in spec)


def _ours(run: dict, key: str, shown: str) -> dict:
    """One of our rows: a run's Real or +syn aggregate, exact match as mean (± std)."""
    a = run["aggregate"][key]
    row = {"data": shown, "run": run["name"], "samples": a["samples"]["mean"],
           "n": a["overall"]["n"], "exact_match": a["overall"]["mean"]}  # fmt: skip
    if a["overall"]["n"] > 1:
        row["exact_match_std"] = a["overall"]["std"]
    for b in BUCKETS:
        row[b] = a[b]["mean"]
        if a[b]["n"] > 1:
            row[f"{b}_std"] = a[b]["std"]
    row["signature"] = run["runs"][0].get("signature", {}).get("parser", "")
    return row


def top_table2(runs: list[dict]) -> tuple[Layout, list[dict]]:
    """Tran & Tan's Table 2 (data, AP filter, target parser, #samples, exact match; the paper's
    rows for both of its settings) and our rows, with +syn's gain over Real."""
    paper = []
    for setting, n_i, acc_i in (("−", 3, 4), ("+", 5, 6)):
        for row in PAPER_TOP_TABLE2:
            paper.append({"data": row[0], "ap_filter": row[1] or "", "target_parser": row[2],
                          "samples": row[n_i], "exact_match": row[acc_i],
                          "source": f"paper ({setting}UNSUPPORTED)"})  # fmt: skip
    layout = Layout(
        "table2",
        "Table 2: exact match of the target parser, real vs real + synthetic",
        (
            *_columns(
                ("data", "data", "text"),
                ("ap_filter", "AP filter", "text"),
                ("target_parser", "target parser", "text"),
                ("samples", "#samples", "int"),
                ("exact_match", "exact match (%)", "num"),
            ),
            Column("gain", "gain over Real", std=""),
        ),  # fmt: skip
        paper=tuple(paper),
        paper_source="paper (Tran & Tan, Table 2)",
        note="",
    )
    rows = []
    for run in runs:
        name = _label(run)
        real = _ours(run, "real", "Real")
        syn = _ours(run, "real+syn", "+syn")
        real.update(ap_filter="", target_parser=name)
        syn.update(ap_filter=name, target_parser=name)
        if real["exact_match"] is not None and syn["exact_match"] is not None:
            syn["gain"] = syn["exact_match"] - real["exact_match"]
        rows += [real, syn]
    return layout, rows


def top_table3(runs: list[dict]) -> tuple[Layout, list[dict]]:
    """Tran & Tan's Table 3: exact match by the test template's frequency in training, with
    the +syn − Real difference per bucket, ours and the paper's (BART)."""

    def delta(real: dict, syn: dict, run: str = "") -> dict:
        d = {"data": "∆ (+syn − Real)", **({"run": run} if run else {})}
        for b in BUCKETS:
            a, c = real.get(b), syn.get(b)
            d[b] = None if a is None or c is None else c - a
        return d

    r, s_ = PAPER_TOP_TABLE3["Real"], PAPER_TOP_TABLE3["+syn"]
    paper_real = {"data": "Real", **dict(zip(BUCKETS, r, strict=True))}
    paper_syn = {"data": "+syn", **dict(zip(BUCKETS, s_, strict=True))}
    layout = Layout(
        "table3",
        "Table 3: exact match by the test template's frequency f in training",
        _columns(
            ("data", "training data", "text"),
            ("run", "run", "text"),
            ("f>=5", "f ≥ 5", "num"),
            ("f<5", "f < 5", "num"),
            ("f=0", "f = 0", "num"),
        ),
        paper=(paper_real, paper_syn, delta(paper_real, paper_syn)),
        paper_source="paper (Tran & Tan, Table 3, BART)",
        note="",
    )
    rows = []
    for run in runs:
        real, syn = _ours(run, "real", "Real"), _ours(run, "real+syn", "+syn")
        rows += [real, syn, delta(real, syn, run["name"])]
    return layout, rows


def top_table4(runs: list[dict]) -> tuple[Layout, list[dict]]:
    """Tran & Tan's Table 4: the low-resource setting, mean ± std over subsamples."""
    paper = tuple(
        {"data": shown, "samples": n, "n": 5, "exact_match": mean, "exact_match_std": pm}
        for shown, (n, mean, pm) in PAPER_TOP_TABLE4.items()
    )
    layout = Layout(
        "table4",
        "Table 4: low-resource setting (one utterance per training template)",
        _columns(
            ("data", "training data", "text"),
            ("run", "run", "text"),
            ("samples", "#samples", "int"),
            ("n", "n", "int"),
            ("exact_match", "exact match (%)", "num"),
        ),  # fmt: skip
        intro=("Mean ± std over subsamples (the paper: 5; ours: the `n` column).",),
        paper=paper,
        paper_source="paper (Tran & Tan, Table 4, BART)",
        note="",
    )
    rows = [_ours(run, key, shown) for run in runs for key, shown in KEYS]
    return layout, rows


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


def write_top_tables(runs: list[dict], out: str | Path, wandb: bool = True) -> dict[str, Path]:
    """Tables 2-4 (``table{2,3,4}.{md,csv,json}``), the bucket figures and each run's
    ``samples_<name>.md`` under ``out`` from the jobs' records (seeds pooled:
    :func:`pool_seeds`), and with ``wandb`` one W&B run ``top-tables``; returns what it wrote."""
    pooled = pool_seeds(runs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    full = [r for r in pooled if r["setting"] == "full"]
    low = [r for r in pooled if r["setting"] == "low_resource"]
    written = {}
    for name, fn, sel in (
        ("table2", top_table2, full),
        ("table3", top_table3, full),
        ("table4", top_table4, low),
    ):
        layout, rows = fn(sel)
        meta = {"run_kind": _kind(sel), "runs": [r["name"] for r in sel]}
        write_table(layout, rows, out, meta, footer=_notes(sel))
        written[name] = out / f"{name}.md"
    figures = plot_buckets(pooled, out)
    for run in runs:
        for r in run["runs"]:
            work = Path(r.get("work") or Path(run["run_dir"]) / r["name"].split("-")[-1])
            if (work / "samples.md").exists():
                shutil.copyfile(work / "samples.md", out / f"samples_{r['name']}.md")
    if wandb:
        from paraamr.tracking import log_table, wandb_run

        with wandb_run(
            project="paraamr",
            group="top",
            name="top-tables",
            config={"runs": [r["run_dir"] for r in runs]},
            directory=str(out),
        ) as run:
            for name in ("table2", "table3", "table4"):
                rows = json.loads((out / f"{name}.json").read_text())["rows"]
                cols = list(dict.fromkeys(k for r in rows for k in r))
                log_table(run, name, cols, [[r.get(c) for c in cols] for r in rows])
    return {**written, **{f.name: f for f in figures}}
