"""Training and validation curves of a trained model, from its CSV log.

Lightning's ``CSVLogger`` writes ``<out>/csv/version_<k>/metrics.csv`` with one row per logged
step (``epoch,step,train/loss,val/loss,...``; empty cells where a metric was not logged at that
step). :func:`read_metrics_csv` reads every numeric column back as ``(step, value)`` points;
:func:`plot_curves` draws one or more runs (one panel per metric) and
:func:`fit` writes ``curves.{png,pdf}`` beside every model it trains.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "metrics.csv")
>>> _ = open(p, "w").write("epoch,step,train/loss,val/loss\\n0,9,2.5,\\n0,19,2.0,\\n0,19,,1.9\\n")
>>> read_metrics_csv(p)
{'train/loss': [(9, 2.5), (19, 2.0)], 'val/loss': [(19, 1.9)]}
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping
from pathlib import Path

from paraamr.errors import CorpusFormatError
from paraamr.figures import new_figure, save_figure

__all__ = ["read_metrics_csv", "plot_curves", "latest_metrics_csv"]

SKIP = {"epoch", "step"}


def read_metrics_csv(path: str | os.PathLike) -> dict[str, list[tuple[int, float]]]:
    """Every metric column as ``(step, value)`` points in file order (empty cells skipped);
    a cell that is not a number raises with the file and line."""
    out: dict[str, list[tuple[int, float]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or "step" not in reader.fieldnames:
            raise CorpusFormatError("not a Lightning CSV log (no 'step' column)", str(path), 1)
        for n, row in enumerate(reader, 2):
            try:
                step = int(float(row["step"]))
                for k, v in row.items():
                    if k in SKIP or v in ("", None):
                        continue
                    value = float(v)
                    if math.isfinite(value):
                        out.setdefault(k, []).append((step, value))
            except ValueError as e:
                raise CorpusFormatError(f"not a number: {e}", str(path), n) from None
    return out


def latest_metrics_csv(out_dir: str | os.PathLike) -> Path | None:
    """``<out_dir>/csv/version_<k>/metrics.csv`` of the highest ``k`` (a resumed run's last)."""
    found = sorted(
        Path(out_dir).glob("csv/version_*/metrics.csv"),
        key=lambda p: int(p.parent.name.split("_")[-1]),
    )
    return found[-1] if found else None


def plot_curves(
    logs: Mapping[str, str | os.PathLike],
    stem: str | os.PathLike,
    signature: str = "",
    title: str = "",
) -> list[Path]:
    """Curves of each run in ``logs`` (label -> metrics.csv): one panel per metric (``loss``
    first; ``train/loss`` and ``val/loss`` share a panel and a run's colour, val dashed with
    markers); learning-rate columns are left out."""
    series = {label: read_metrics_csv(p) for label, p in logs.items()}
    names = {k.split("/", 1)[-1] for s in series.values() for k in s if "lr" not in k.lower()}
    metrics = sorted(names, key=lambda m: (m != "loss", m)) or ["loss"]
    fig = new_figure(4.2 * len(metrics), 3.0, ncols=len(metrics))
    for ax, m in zip(fig.axes, metrics, strict=True):
        for i, (label, s) in enumerate(series.items()):
            colour = f"C{i}"
            for key, values in s.items():
                if key.split("/", 1)[-1] != m or not values:
                    continue
                steps, ys = zip(*values, strict=True)
                val = key.startswith("val")
                ax.plot(steps, ys, color=colour, linestyle="--" if val else "-",
                        marker="o" if val else None, markersize=3,
                        label=f"{label} {key.split('/', 1)[0]}")  # fmt: skip
        ax.set_xlabel("step")
        ax.set_ylabel(m)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    return save_figure(fig, stem, signature)
