"""Table 7 of the ParaAMR paper: few-shot GLUE classifiers with and without paraphrase
augmentation, gathered from the jobs of :mod:`paraamr.fewshot.job`.

One row per (task, k, augmentation): mean ± std over seeds of test accuracy (F1 too for MRPC and
QQP, class 1), and for every row other than the baseline a paired comparison with the
no-augmentation row of the same task and k over the seeds both have (``d_acc``: mean difference,
``wins``: seeds where it is better, of the paired seeds); paraphrase rows are compared with the
repeat baseline too (``d_acc_repeat``, ``wins_repeat``).

>>> r = lambda aug, seed, acc: {"setting": f"MRPC k=15 {aug}", "task": "mrpc", "k": 15,
...     "augmentation": aug, "seed": seed, "test": {"acc": acc, "f1": acc},
...     "sources": {"test": "t"}}
>>> rows = gather_rows([r("none", 0, 60.0), r("none", 1, 62.0), r("repeat", 0, 61.0),
...                     r("repeat", 1, 61.0)])
>>> [(x["setting"], x["acc_mean"], x.get("d_acc"), x.get("wins")) for x in rows]
[('MRPC k=15 none', 61.0, None, None), ('MRPC k=15 repeat', 61.0, 0.0, '1/2')]
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from paraamr.errors import InputError
from paraamr.paper import PAPER_TABLE7
from paraamr.tables.render import Column, Layout
from paraamr.tables.sweep import gather_seeds, split_settings

__all__ = [
    "TASK_ORDER",
    "gather_rows",
    "paired",
    "paired_differences",
    "plot_paired_differences",
    "table7_layout",
    "paper_rows",
]

TASK_ORDER = ("mrpc", "qqp", "rte")
PAPER_NAMES = {
    "baseline": "none",
    "ParaNMT": "scpn-paranmt",
    "ParaBank1": "scpn-parabank1",
    "ParaBank2": "scpn-parabank2",
    "ParaAMR": "scpn-paraamr",
}


def paired(
    rows: Iterable[Mapping[str, Any]], base: Iterable[Mapping[str, Any]]
) -> tuple[float, int, int, int]:
    """``(mean accuracy difference, wins, ties, paired seeds)`` of ``rows`` against ``base``
    over the seeds both have.

    >>> paired([{"seed": 0, "test": {"acc": 70.0}}, {"seed": 1, "test": {"acc": 60.0}},
    ...         {"seed": 2, "test": {"acc": 65.0}}],
    ...        [{"seed": 0, "test": {"acc": 68.0}}, {"seed": 1, "test": {"acc": 61.0}}])
    (0.5, 1, 0, 2)
    """
    by = {r["seed"]: r["test"]["acc"] for r in base}
    diffs = [r["test"]["acc"] - by[r["seed"]] for r in rows if r["seed"] in by]
    if not diffs:
        return float("nan"), 0, 0, 0
    wins, ties = sum(d > 0 for d in diffs), sum(d == 0 for d in diffs)
    return round(statistics.fmean(diffs), 4), wins, ties, len(diffs)


def paired_differences(results: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """Per augmented setting, ``(seed, accuracy - the same seed's "none" accuracy)`` for every
    seed both have: what the paired columns of the table average.

    >>> r = lambda aug, seed, acc: {"setting": f"MRPC k=15 {aug}", "task": "mrpc", "k": 15,
    ...                             "augmentation": aug, "seed": seed, "test": {"acc": acc}}
    >>> paired_differences([r("none", 0, 60.0), r("none", 1, 62.0), r("repeat", 0, 61.5),
    ...                     r("repeat", 1, 61.0), r("repeat", 2, 70.0)])
    {'MRPC k=15 repeat': [(0, 1.5), (1, -1.0)]}
    """
    results = list(results)
    base = {(r["task"], int(r["k"]), r["seed"]): r["test"]["acc"] for r in results
            if r["augmentation"] == "none"}  # fmt: skip
    out: dict[str, list[tuple[int, float]]] = {}
    for r in sorted(results, key=lambda r: (_order(r), r["seed"])):
        key = (r["task"], int(r["k"]), r["seed"])
        if r["augmentation"] != "none" and key in base:
            out.setdefault(r["setting"], []).append((r["seed"], r["test"]["acc"] - base[key]))
    return out


def plot_paired_differences(
    results: Iterable[Mapping[str, Any]], stem: str | Path, signature: str = ""
) -> list[Path]:
    """``<stem>.{png,pdf}``: each seed's accuracy difference with no augmentation (dots), and
    their mean (a bar), per augmented setting."""
    from paraamr.figures import new_figure, save_figure

    diffs = paired_differences(results)
    fig = new_figure(max(4.0, 1.2 * len(diffs) + 2), 3.4)
    ax = fig.axes[0]
    for i, pts in enumerate(diffs.values()):
        ys = [d for _, d in pts]
        ax.bar(i, sum(ys) / len(ys), 0.6, color="C0", alpha=0.35)
        ax.plot([i] * len(ys), ys, "o", color="C0", markersize=4)
        for seed, d in pts:
            ax.annotate(str(seed), (i, d), textcoords="offset points", xytext=(5, 0), fontsize=6)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(diffs)), list(diffs), rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("Δ test accuracy vs none (same seed)")
    return save_figure(fig, stem, signature)


def _order(r: Mapping[str, Any]) -> tuple:
    aug = r["augmentation"]
    t = r["task"]
    rank = {"none": 0, "repeat": 1}.get(aug, 2)
    return (TASK_ORDER.index(t) if t in TASK_ORDER else 99, t, int(r["k"]), rank, aug)


def gather_rows(results: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Table 7 rows (see the module docstring), in task, k, augmentation order."""
    results = list(results)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        groups.setdefault(r["setting"], []).append(r)
    rows = []
    for setting, rs in sorted(groups.items(), key=lambda kv: _order(kv[1][0])):
        metrics = {"acc": lambda r: r["test"]["acc"]}
        if all("f1" in r["test"] for r in rs):
            metrics["f1"] = lambda r: r["test"]["f1"]
        if all("test_constant_majority" in r for r in rs):
            metrics["const_acc"] = lambda r: r["test_constant_majority"]["acc"]
        split = split_settings(setting, rs)
        if len(split) > 1:
            raise InputError(
                f"Table 7 setting {setting!r} holds runs of different settings: "
                + "; ".join(f"{len(sub)} as {name}" for name, sub in split)
                + " (keep one of them under --runs)"
            )
        (row,) = gather_seeds(rs, metrics, group="setting", first=())
        first = rs[0]
        row.update(
            setting=setting,
            task=first["task"],
            k=int(first["k"]),
            augmentation=first["augmentation"],
            test_source=first["sources"]["test"],
        )
        aug_stats = [r["augment"]["stats"] for r in rs if r.get("augment", {}).get("stats")]
        if aug_stats:
            row["augment_kept"] = sum(s.get("kept", 0) for s in aug_stats)
            row["augment_candidates"] = sum(s.get("candidates", 0) for s in aug_stats)
            # runs from before the count (or with near_copy_share: null) lack it
            if all("kept_near_copy" in s or not s.get("kept") for s in aug_stats):
                row["augment_near_copies"] = sum(s.get("kept_near_copy", 0) for s in aug_stats)
                shares = {r["augment"].get("near_copy_share", 0.1) for r in rs}
                row["near_copy_share"] = shares.pop() if len(shares) == 1 else None
            row["perplexity_filter"] = rs[0]["augment"].get("perplexity_filter")
            row["augment_nearest_template"] = sum(
                r["augment"].get("paraphraser_counts", {}).get("nearest_template", 0) for r in rs
            )
        rows.append(row)
    by_setting = {row["setting"]: groups[row["setting"]] for row in rows}
    for row in rows:
        if row["augmentation"] == "none":
            continue
        for base, suffix in (("none", ""), ("repeat", "_repeat")):
            if base == row["augmentation"] or (base == "repeat" and row["augmentation"] == "none"):
                continue
            key = f"{row['task'].upper()} k={row['k']} {base}"
            if key not in by_setting:
                continue
            d, wins, ties, n = paired(by_setting[row["setting"]], by_setting[key])
            row[f"d_acc{suffix}"] = d
            row[f"wins{suffix}"] = f"{wins}/{n}" + (f" ({ties} tied)" if ties else "")
    return rows


def paper_rows() -> tuple[dict, ...]:
    """The paper's Table 7 as rows keyed like ours (``MRPC k=15 scpn-paraamr``)."""
    out = []
    for t_i, task in enumerate(TASK_ORDER):
        for k, block in PAPER_TABLE7.items():
            for name, accs in block.items():
                out.append(
                    {"setting": f"{task.upper()} k={k} {PAPER_NAMES[name]}", "acc_mean": accs[t_i]}
                )
    return tuple(out)


def table7_layout(note: str) -> Layout:
    """Table 7: test accuracy (F1) mean ± std over seeds, paired differences with the baselines."""
    return Layout(
        name="table7",
        title="Table 7",
        columns=(
            Column("setting", "task / k / augmentation", fmt="text"),
            Column("n_seeds", "seeds", fmt="int"),
            Column("acc_mean", "accuracy", std="acc_std"),
            Column("f1_mean", "F1", std="f1_std"),
            Column("const_acc_mean", "majority-label acc", std=""),
            Column("d_acc", "Δacc vs none (paired)", std=""),
            Column("wins", "seeds better than none", fmt="text"),
            Column("d_acc_repeat", "Δacc vs repeat (paired)", std=""),
            Column("wins_repeat", "seeds better than repeat", fmt="text"),
        ),
        intro=(
            f"{note}. Test accuracy ×100 (F1 of class 1 for MRPC and QQP), mean ± std over "
            "seeds; the test set is 2/3 of the evaluation set (one seeded split for every seed), "
            "the best epoch chosen on the other 1/3. Paired columns: mean over the seeds both "
            "rows have of (this row − baseline), and on how many of them this row is better. "
            "'repeat' = each example plus 3 copies (the augmented size, no new text); "
            "'scpn-<corpus>' = 3 syntax-controlled paraphrases per example from a generator "
            "trained on that corpus. 'majority-label acc': always predicting the few-shot set's "
            "most frequent label (what a classifier that learned nothing scores).",
        ),
        paper=paper_rows(),
        paper_source="paper (bert-base-uncased; accuracy, no std)",
        row_notes=lambda r: (
            [f"test set: {r['test_source']}"]
            + (
                [
                    f"augmentation kept {r['augment_kept']}/{r['augment_candidates']} candidates "
                    "over all seeds"
                    + (
                        f" ({r['augment_near_copies']} of them near-copies: at most "
                        f"{r['near_copy_share']:.0%} of the input's words edited)"
                        if "augment_near_copies" in r and r.get("near_copy_share") is not None
                        else ""
                    )
                    + f"; perplexity filter {r.get('perplexity_filter')}"
                    + (
                        f"; {r['augment_nearest_template']} candidates got the parse of the "
                        "nearest template (no training parse fits theirs)"
                        if r.get("augment_nearest_template")
                        else ""
                    )
                ]
                if "augment_kept" in r
                else []
            )
        ),
    )
