"""A comparison's report: one table per task, every row as mean ± std over seeds, paired
differences against the reference row, and the control's verdict.

Per task the headline (:data:`HEADLINES`) is read from each job's record; a row's seeds are
paired with the reference row's same seeds, so a difference is the mean of per-seed
differences with its 95% t-interval. With a ``shuffled`` control, a task *can compare corpora*
only when some real corpus beats the control with an interval above zero; otherwise the
report says that the task cannot tell corpora apart in this setting, and names no winner.

>>> paired([70.0, 71.0, 72.0], [60.0, 62.0, 61.0])["mean"]
10.0
>>> verdict({"A": {"lo": 2.0}, "B": {"lo": -1.0}}, has_control=True)["can_compare"]
True
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from paraamr.compare.plan import UNTRAINED, job_rows
from paraamr.metrics.aggregate import mean_std
from paraamr.paper import PAPER_TABLE5
from paraamr.results import RESULT_FILE
from paraamr.tables.render import Column, Layout, write_table
from paraamr.utils import measured_text, write_json_atomic

__all__ = ["HEADLINES", "headline", "paired", "verdict", "gather", "write_report"]

log = logging.getLogger(__name__)

#: per task: (headline key, what it is, higher is better)
HEADLINES = {
    "table5": ("spearman", "STS12-16 average Spearman ×100 (SimCSE trained on the row)"),
    "table6": ("bleu", "BLEU to the reference paraphrase, mean over the test sets"),
    "table7": ("acc", "few-shot test accuracy with the row's Table 6 model as augmentation"),
}


def _table6_mean(r: Mapping[str, Any], metric: str) -> float:
    vals = [t[metric] for t in r["tests"].values() if t.get(metric) is not None]
    vals = [float(v) for v in vals if not math.isnan(float(v))]
    return sum(vals) / len(vals) if vals else math.nan


#: per task, every number a row gets: name -> reader of one job record
METRICS: dict[str, dict[str, Callable[[Mapping[str, Any]], float]]] = {
    "table5": {
        "spearman": lambda r: r["sts"]["avg"]["spearman"],
        "pearson": lambda r: r["sts"]["avg"]["pearson"],
    },
    "table6": {
        "bleu": lambda r: _table6_mean(r, "bleu"),
        "ted3": lambda r: _table6_mean(r, "ted3"),
        "control_gain": lambda r: _table6_mean(r, "control_gain"),
    },
    "table7": {
        "acc": lambda r: r["test"]["acc"],
    },
}


def headline(task: str, record: Mapping[str, Any]) -> float:
    """The task's headline number of one job record."""
    return float(METRICS[task][HEADLINES[task][0]](record))


def paired(values: Sequence[float], ref: Sequence[float]) -> dict[str, Any]:
    """Mean of the per-seed differences ``values - ref`` with its 95% t-interval (``None``
    bounds with fewer than two seeds)."""
    from scipy.stats import t as student

    d = [a - b for a, b in zip(values, ref, strict=True)]
    if not d:
        return {"mean": None, "lo": None, "hi": None, "n": 0, "per_seed": []}
    mean = sum(d) / len(d)
    if len(d) < 2:
        return {"mean": round(mean, 4), "lo": None, "hi": None, "n": 1, "per_seed": d}
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    half = float(student.ppf(0.975, len(d) - 1)) * sd / math.sqrt(len(d))
    return {
        "mean": round(mean, 4),
        "lo": round(mean - half, 4),
        "hi": round(mean + half, 4),
        "n": len(d),
        "per_seed": [round(x, 4) for x in d],
    }


def verdict(against_control: Mapping[str, Mapping[str, Any]], has_control: bool) -> dict:
    """Whether a task can compare corpora: some real row beats the shuffled control with a
    95% interval above zero. Without a control, nothing is claimed either way."""
    if not has_control:
        return {
            "can_compare": None,
            "text": "no control row: whether this task can tell corpora "
            "apart is untested (add controls=[shuffled])",
        }
    if against_control and all(d.get("lo") is None for d in against_control.values()):
        return {
            "can_compare": None,
            "above_control": [],
            "text": "fewer than two seeds: the seed spread is unknown, so whether the task "
            "separates real pairs from the shuffled control is untested (run seeds=3)",
        }
    above = sorted(r for r, d in against_control.items() if d.get("lo") is not None and d["lo"] > 0)
    if above:
        return {
            "can_compare": True,
            "above_control": above,
            "text": f"{', '.join(above)} beat the shuffled control beyond the seed spread: "
            "the task separates real pairs from unrelated ones here",
        }
    return {
        "can_compare": False,
        "above_control": [],
        "text": "no corpus beats the shuffled control beyond the seed spread: in this setting "
        "the task cannot compare corpora, and no row is named better",
    }


def _records(plan: Mapping[str, Any], task: str) -> dict[str, dict[int, dict]]:
    out: dict[str, dict[int, dict]] = {}
    for j in plan["jobs"]:
        if j["task"] != task:
            continue
        path = Path(j["run_dir"]) / RESULT_FILE
        if path.is_file():
            out.setdefault(j["row"], {})[int(j["seed"])] = json.loads(path.read_text())
    return out


def gather(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Per task: rows (mean, std, per-seed values of every number), paired differences of the
    headline against the reference row and against the control, the verdict, what the policy
    kept of every row, and the jobs still missing."""
    result: dict[str, Any] = {}
    for task, info in plan["tasks"].items():
        key, what = HEADLINES[task]
        recs = _records(plan, task)
        rows = []
        for row in job_rows(plan, task):
            by_seed = recs.get(row, {})
            seeds = sorted(by_seed)
            entry: dict[str, Any] = {"row": row, "n_seeds": len(seeds), "seeds": seeds}
            for m, get in METRICS[task].items():
                vals = [float(get(by_seed[s])) for s in seeds]
                entry[f"{m}_per_seed"] = [round(v, 4) for v in vals]
                if vals:
                    entry[f"{m}_mean"], entry[f"{m}_std"] = mean_std(vals)
            entry["signature"] = by_seed[seeds[0]]["signature"] if seeds else None
            entry["counts"] = info["sets"].get(row, {}).get("counts")
            entry["measured"] = [by_seed[s].get("measured") for s in seeds]
            entry["seconds"] = sum(by_seed[s].get("seconds") or 0 for s in seeds)
            rows.append(entry)
        per_seed = {
            r["row"]: dict(zip(r["seeds"], r[f"{key}_per_seed"], strict=True)) for r in rows
        }

        def diff(a: str, b: str, per_seed: dict = per_seed) -> dict[str, Any]:
            return _paired_rows(per_seed, a, b)

        ref = plan["ref"]
        has_control = "shuffled" in plan["controls"]
        real = [c["name"] for c in plan["corpora"]]
        against_ref = {
            r["row"]: diff(r["row"], ref)
            for r in rows
            if r["row"] not in (ref, UNTRAINED) and r["n_seeds"]
        }
        against_control = {r: diff(r, "shuffled") for r in real} if has_control else {}
        missing = [
            j
            for j in plan["jobs"]
            if j["task"] == task and not (Path(j["run_dir"]) / RESULT_FILE).is_file()
        ]
        base = next((r for r in rows if r["row"] == UNTRAINED and r.get(f"{key}_mean") is not None),
                    None)  # fmt: skip
        moved = {
            r["row"]: round(r[f"{key}_mean"] - base[f"{key}_mean"], 4)
            for r in rows
            if base is not None and r["row"] != UNTRAINED and r.get(f"{key}_mean") is not None
        }
        result[task] = {
            "headline": key,
            "moved_from_untrained": moved,
            "what": what,
            "policy_signature": info["signature"],
            "rows": rows,
            "ref": ref,
            "against_ref": against_ref,
            "against_control": against_control,
            "verdict": verdict(against_control, has_control),
            "missing_jobs": len(missing),
        }
    return result


def _paired_rows(per_seed: Mapping[str, Mapping[int, float]], a: str, b: str) -> dict[str, Any]:
    """:func:`paired` of rows ``a`` and ``b`` on the seeds both have."""
    both = sorted(set(per_seed.get(a, {})) & set(per_seed.get(b, {})))
    return paired([per_seed[a][s] for s in both], [per_seed[b][s] for s in both])


def _layout(task: str, gathered: Mapping[str, Any], note: str) -> Layout:
    key, what = HEADLINES[task]
    cols = [
        Column("row", "row", fmt="text"),
        Column("n_seeds", "seeds", fmt="int"),
        Column("train_pairs", "pairs", fmt="int"),
    ]
    cols += [Column(f"{m}_mean", m, std=f"{m}_std") for m in METRICS[task]]
    cols += [Column("vs_ref", f"Δ{key} vs {gathered['ref']}", fmt="text")]
    paper = ()
    if task == "table5":
        paper = tuple(
            {"row": k, "n_seeds": 5, "pearson_mean": p, "spearman_mean": s}
            for k, (p, s) in PAPER_TABLE5.items()
        )
    return Layout(
        name=f"compare-{task}",
        title=f"Comparison, {task}",
        columns=tuple(cols),
        intro=(
            f"{what}; mean ± std over seeds. Δ: mean of per-seed differences "
            "against the reference row [95% t-interval].",
            note,
        ),
        paper=paper,
        paper_source="paper (bert-base-uncased, 5 seeds)",
    )


def _fmt_diff(d: Mapping[str, Any] | None) -> str:
    if not d or d.get("mean") is None:
        return "–"
    if d.get("lo") is None:
        return f"{d['mean']:+.2f} (1 seed)"
    return f"{d['mean']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}]"


def write_report(
    plan: Mapping[str, Any],
    out_dir: str | Path,
    *,
    table2: Mapping[str, Any] | None = None,
    wandb_cfg: Mapping | None = None,
) -> dict:
    """Write ``compare.json`` (per task, per row: the headline's mean, std and per-seed values,
    every other number, the policy and its counts), ``compare-<task>.{md,csv,json}``,
    ``compare.md`` (every task, the verdicts, Table 2 of the training sets when given) and the
    figure ``compare.{png,pdf}``; log one W&B run per task in the comparison's group."""
    out = Path(out_dir)
    gathered = gather(plan)
    md = [
        "# Corpora compared downstream",
        "",
        f"{plan['common_sources']} common sources, {plan['dev_sources']} held out as dev "
        f"sources of every row; seeds {plan['seeds']}; reference row `{plan['ref']}`.",
        "",
        f"Policy: `{json.dumps(plan['policy'], sort_keys=True)}`; perplexity LM: "
        + (f"`{plan['lm']}`." if plan["lm"] != "none" else "none (no task filters on it)."),
        "",
    ]
    for task, g in gathered.items():
        rows = []
        for r in g["rows"]:
            counts = r.get("counts") or {}
            rows.append(
                {
                    **r,
                    "train_pairs": counts.get("train_pairs"),
                    "vs_ref": _fmt_diff(g["against_ref"].get(r["row"])),
                }
            )
        stamps = [m for r in g["rows"] for m in r["measured"]]
        note = measured_text(stamps) if stamps else "No job has run yet."
        paths = write_table(
            _layout(task, g, note),
            rows,
            out,
            {
                "run_kind": "offline analogue"
                if "offline" in str(plan.get("kind", "offline"))
                else "paper settings",
                "policy": plan["policy"],
                "verdict": g["verdict"],
            },
        )
        md += [
            paths["md"].read_text(encoding="utf-8").replace("# Comparison", "## Comparison"),
            f"**Can this task compare corpora?** {g['verdict']['text']}.",
            "",
        ]
        if g.get("moved_from_untrained"):
            md += [
                "Training moved the headline from the untrained base by: "
                + "; ".join(f"{k} {v:+.2f}" for k, v in g["moved_from_untrained"].items())
                + ".",
                "",
            ]
        if g["against_control"]:
            md += [
                "Against the shuffled control: "
                + "; ".join(f"{k} {_fmt_diff(v)}" for k, v in g["against_control"].items())
                + ".",
                "",
            ]
        if g["missing_jobs"]:
            md += [f"{g['missing_jobs']} job(s) of {task} have no result yet.", ""]
        if plan["tasks"][task]["sets"]:  # table7 trains on no set of its own
            md += [
                "What the policy kept (training set of each row):",
                "",
                "| row | read | identical | duplicate | ppl dropped | cap dropped | equal-pairs "
                "dropped | sources | pairs | dev pairs |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]
            for row, s in plan["tasks"][task]["sets"].items():
                c = s["counts"]
                md.append(
                    f"| {row} | {c['paraphrases_read']} | {c['dropped_identical']} | "
                    f"{c['dropped_duplicate']} | {c['dropped_perplexity']} | {c['dropped_cap']} "
                    f"| {c['dropped_equal_pairs']} | {c['train_sources']} | {c['train_pairs']} "
                    f"| {c['dev_pairs']} |"
                )
            md.append("")
    if table2:
        md += [
            "## Table 2 of the training sets",
            "",
            Path(table2["paths"]["md"])
            .read_text(encoding="utf-8")
            .replace("# Table 2", "### Table 2"),
            "",
        ]
    figure = _figure(gathered, out / "compare")
    (out / "compare.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    payload = {
        "policy": plan["policy"],
        "lm": plan["lm"],
        "seeds": plan["seeds"],
        "ref": plan["ref"],
        "common_sources": plan["common_sources"],
        "dev_sources": plan["dev_sources"],
        "tasks": gathered,
        "table2": table2["rows"] if table2 else None,
        "figure": str(figure[0]) if figure else None,
    }
    write_json_atomic(out / "compare.json", payload, sort_keys=False, default=str)
    for task, g in gathered.items():  # ready to cite: docs/results/<name>.json (make results-docs)
        write_json_atomic(out / f"reported-{task}.json", reported_table(plan, task, g),
                          sort_keys=False)  # fmt: skip
    _log_wandb(plan, gathered, out, wandb_cfg or {"enabled": False})
    return payload


def reported_table(plan: Mapping[str, Any], task: str, g: Mapping[str, Any]) -> dict[str, Any]:
    """One task's rows as a results file of the handbook (:mod:`paraamr.reported`): per row the
    headline's mean ± std over seeds and the paired difference against the reference row, the
    pairs it trained on; the date and CPU of the runs, the command, the data and the policy."""
    import shlex
    import sys

    key = g["headline"]
    rows = []
    for r in g["rows"]:
        if r.get(f"{key}_mean") is None:
            continue
        pairs = (r.get("counts") or {}).get("train_pairs")
        rows.append([r["row"], f"{pairs:,}" if pairs else "–", r["n_seeds"],
                     f"{r[f'{key}_mean']:.2f} ± {r[f'{key}_std']:.2f}",
                     _fmt_diff(g["against_ref"].get(r["row"]))])  # fmt: skip
    stamps = [m for r in g["rows"] for m in r["measured"] if m]
    dates = sorted({m["date"] for m in stamps}) or ["unmeasured"]
    cpus = sorted({f"{m['cpu']} ({m['cores']} cores)" for m in stamps}) or ["unmeasured"]
    return {
        "title": f"{g['what']}, mean ± std over seeds",
        "date": dates[-1],
        "machine": ", ".join(cpus),
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        "data": f"{plan['common_sources']} common sources, {plan['dev_sources']} held out",
        "models": ", ".join(
            sorted(
                {
                    str(r["signature"]).split("|model:")[-1].split("|")[0]
                    for r in g["rows"]
                    if r.get("signature")
                }
            )
        ),
        "columns": ["row", "pairs", "seeds", key, f"Δ vs {g['ref']} [95% CI]"],
        "rows": rows,
        "notes": [f"Can this task compare corpora? {g['verdict']['text']}."],
    }


def _figure(gathered: Mapping[str, Any], stem: Path) -> list[Path]:
    from paraamr.figures import new_figure, save_figure

    tasks = list(gathered)
    if not tasks:
        return []
    fig = new_figure(4.2 * len(tasks), 3.2, ncols=len(tasks))
    for ax, task in zip(fig.axes, tasks, strict=True):
        g = gathered[task]
        key = g["headline"]
        rows = [r for r in g["rows"] if r.get(f"{key}_mean") is not None]
        xs = list(range(len(rows)))
        ax.bar(
            xs,
            [r[f"{key}_mean"] for r in rows],
            yerr=[r[f"{key}_std"] for r in rows],
            color=["#999999" if r["row"] in ("shuffled", UNTRAINED) else "C0" for r in rows],
            capsize=3,
        )
        for x, r in zip(xs, rows, strict=True):
            ax.plot([x] * len(r[f"{key}_per_seed"]), r[f"{key}_per_seed"], "k.", markersize=3)
        ax.set_xticks(xs, [r["row"] for r in rows], rotation=25, fontsize=7, ha="right")
        lo = min((min(r[f"{key}_per_seed"]) for r in rows), default=0)
        hi = max((max(r[f"{key}_per_seed"]) for r in rows), default=1)
        ax.set_ylim(lo - 0.15 * (hi - lo + 1e-9) - 0.5, hi + 0.15 * (hi - lo + 1e-9) + 0.5)
        ax.set_title(f"{task}: {key} (mean ± std, dots: seeds)", fontsize=8)
    return save_figure(
        fig, stem, json.dumps({t: g["policy_signature"] for t, g in gathered.items()})
    )


def _log_wandb(
    plan: Mapping[str, Any], gathered: Mapping[str, Any], out: Path, wb: Mapping[str, Any]
) -> None:
    from paraamr.tracking import log_table, wandb_run

    if not wb.get("enabled", True):
        return
    group = wb.get("group") or "compare"
    for task, g in gathered.items():
        key = g["headline"]
        with wandb_run(
            project=wb.get("project", "paraamr"),
            group=group,
            name=f"compare-{task}",
            config={"policy": plan["policy"], "task": task},
            directory=str(out),
            mode=wb.get("mode"),
        ) as run:
            cols = ["row", "n_seeds", f"{key}_mean", f"{key}_std", "vs_ref"]
            data = [
                [
                    r["row"],
                    r["n_seeds"],
                    r.get(f"{key}_mean"),
                    r.get(f"{key}_std"),
                    _fmt_diff(g["against_ref"].get(r["row"])),
                ]
                for r in g["rows"]
            ]
            log_table(run, f"compare/{task}", cols, data)
