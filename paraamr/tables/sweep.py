"""Gather a seed sweep (one result per job) into table rows: mean ± std over seeds per group,
a grouped bar plot, and a W&B run holding the table. Table 5 uses it; so do the tables that follow
(one gatherer for all).

>>> rows = gather_seeds(
...     [{"corpus": "A", "seed": 1, "acc": 72.0}, {"corpus": "A", "seed": 0, "acc": 70.0},
...      {"corpus": "none", "seed": 0, "acc": 50.0}],
...     {"acc": lambda r: r["acc"]})
>>> [(r["dataset"], r["n_seeds"], r["seeds"], r["acc_mean"], r["acc_std"]) for r in rows]
[('none', 1, [0], 50.0, 0.0), ('A', 2, [0, 1], 71.0, 1.4142)]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from paraamr.errors import DataNotFoundError
from paraamr.metrics.aggregate import mean_std
from paraamr.results import read_results

__all__ = [
    "gather_seeds",
    "split_settings",
    "setting_of",
    "sweep_arguments",
    "plot_grouped",
    "log_to_wandb",
]

_SEED_FIELD = re.compile(r"(?:^|\|)seed:\d+(?=\||$)")


def setting_of(signature: str) -> str:
    """A run's signature without its ``seed:N`` field: the runs of one setting share it.

    >>> setting_of("paraamr:0.1.0|train:MSRP|seed:3|steps:300")
    'paraamr:0.1.0|train:MSRP|steps:300'
    """
    return _SEED_FIELD.sub("", signature or "")


def split_settings(
    name: str, results: Sequence[Mapping[str, Any]]
) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """The results of one table row split by setting (:func:`setting_of` their signatures), so
    that runs trained or decoded otherwise are never pooled as seeds of one another. One
    setting keeps ``name``; with more, each is named ``name [what its signature has that not
    all of them have]`` (``[without ...]`` for the one that only lacks something).

    >>> runs = [{"signature": "a|seed:0|steps:400"}, {"signature": "a|seed:1|steps:400"},
    ...         {"signature": "a|seed:0|steps:800"}]
    >>> [(n, len(rs)) for n, rs in split_settings("P", runs)]
    [('P [steps:400]', 2), ('P [steps:800]', 1)]
    """
    by: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in results:
        by[setting_of(str(r.get("signature", "")))].append(r)
    if len(by) == 1:
        return [(name, list(results))]
    items = {k: set(re.split(r"[|,]", k)) for k in by}
    common = set.intersection(*items.values())
    union = set.union(*items.values())
    out = []
    for k, rs in by.items():
        own = sorted(items[k] - common)
        label = ", ".join(own) if own else "without " + ", ".join(sorted(union - items[k]))
        out.append((f"{name} [{label}]", rs))
    return sorted(out, key=lambda x: x[0])


def sweep_arguments(
    table: str, job: str, note: str, argv: Sequence[str] | None, description: str = ""
) -> tuple[Any, list[dict]]:
    """The gatherers' command line (``--runs``, ``--out``, ``--note``, ``--no-wandb``; defaults
    ``results/<table>/runs`` and ``results/<table>``) and the records of ``job`` under ``--runs``
    (:func:`paraamr.results.read_results`).

    Raises:
        DataNotFoundError: no record under ``--runs`` (the message names it and the command).
    """
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--runs", default=f"results/{table}/runs")
    ap.add_argument("--out", default=f"results/{table}")
    ap.add_argument("--note", default=note)
    ap.add_argument("--no-wandb", action="store_true")
    a = ap.parse_args(argv)
    try:
        results = read_results(a.runs, job)
    except DataNotFoundError as e:
        raise DataNotFoundError(f"{e} (make {table})") from None
    return a, results


def gather_seeds(
    results: Iterable[Mapping[str, Any]],
    metrics: Mapping[str, Callable[[Mapping[str, Any]], float]],
    *,
    group: str = "corpus",
    first: Sequence[str] = ("none",),
) -> list[dict]:
    """One row per ``group`` value (``first`` ones leading, then sorted) and setting
    (:func:`split_settings`): ``dataset``, ``n_seeds``, ``seeds``, ``<metric>_mean`` /
    ``<metric>_std`` for each metric, and the ``signature`` of the first seed."""
    by: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in results:
        by[r[group]].append(r)
    rows = []
    for key in sorted(by, key=lambda k: (k not in first, k)):
        for name, runs in split_settings(key, by[key]):
            rs = sorted(runs, key=lambda r: r["seed"])
            row: dict[str, Any] = {"dataset": name, "n_seeds": len(rs),
                                   "seeds": [r["seed"] for r in rs]}  # fmt: skip
            for m, get in metrics.items():
                row[f"{m}_mean"], row[f"{m}_std"] = mean_std([float(get(r)) for r in rs])
            row["signature"] = rs[0].get("signature", "")
            rows.append(row)
    return rows


def plot_grouped(
    rows: Sequence[Mapping[str, Any]],
    metrics: Sequence[str],
    labels: Sequence[str],
    stem: str | Path,
    *,
    ylabel: str,
    title: str,
    signature: str = "",
) -> list[Path]:
    """Bars of ``<metric>_mean`` (error bars ``<metric>_std``), one group per metric, one bar
    per row: ``<stem>.png`` and ``<stem>.pdf`` (:func:`paraamr.figures.save_figure`)."""
    from paraamr.figures import new_figure, save_figure

    fig = new_figure(7, 3.5)
    ax = fig.axes[0]
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        xs = [j + i * width for j in range(len(metrics))]
        means = [r[f"{m}_mean"] for m in metrics]
        ax.bar(xs, means, width, yerr=[r[f"{m}_std"] for m in metrics], label=r["dataset"])
    ax.set_xticks([j + width * (len(rows) - 1) / 2 for j in range(len(metrics))], labels)
    ax.set_ylabel(ylabel)
    lo = min(r[f"{m}_mean"] for r in rows for m in metrics)
    ax.set_ylim(max(0, lo - 10), 100)
    ax.legend(fontsize=8, ncol=len(rows))
    ax.set_title(title)
    return save_figure(fig, Path(stem).with_suffix("") if Path(stem).suffix else stem, signature)


def log_to_wandb(
    layout: Any, rows: Sequence[Mapping[str, Any]], *, group: str, directory: str, config: dict
) -> None:
    """One W&B run ``<table>-summary`` in ``group`` holding the table (ours + the paper's)."""
    from paraamr.tables.render import wandb_rows
    from paraamr.tracking import log_table, wandb_run

    cols, data = wandb_rows(layout, rows)
    with wandb_run(
        project="paraamr",
        group=group,
        name=f"{layout.name}-summary",
        config=config,
        directory=directory,
    ) as run:
        log_table(run, layout.name, cols, data)
