"""Figures written the one way: PNG (docs, W&B) and PDF (papers) side by side, each carrying
the signature of the numbers it shows in its metadata (PNG text chunk ``Description``, PDF
``Subject``) and, when asked, as a caption under the plot.

>>> import tempfile, os
>>> fig = new_figure(3, 2)
>>> _ = fig.axes[0].plot([0, 1], [1, 0])
>>> paths = save_figure(fig, os.path.join(tempfile.mkdtemp(), "line"), "demo:1|data:x")
>>> [p.suffix for p in paths]
['.png', '.pdf']
>>> png_description(paths[0])
'demo:1|data:x'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["new_figure", "save_figure", "png_description", "pyplot", "bar_figure", "save_bars",
           "save_benchmark"]  # fmt: skip


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def new_figure(width: float, height: float, ncols: int = 1, **kwargs: Any) -> Any:
    """A figure with ``ncols`` axes in one row (``fig.axes``)."""
    fig, _ = pyplot().subplots(1, ncols, figsize=(width, height), squeeze=False, **kwargs)
    return fig


def save_figure(
    fig: Any, stem: str | os.PathLike, signature: str = "", caption: bool = False, dpi: int = 130
) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf``, the signature in both files' metadata (and, with
    ``caption``, in small type under the plot); close the figure."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    if caption and signature:
        fig.text(0.01, 0.005, signature, fontsize=5, color="#555555", wrap=True)
    fig.tight_layout(rect=(0, 0.04 if caption and signature else 0, 1, 1))
    out = []
    for ext, meta in (("png", {"Description": signature}), ("pdf", {"Subject": signature})):
        path = stem.with_name(stem.name + f".{ext}")
        fig.savefig(path, dpi=dpi, metadata=meta if signature else None)
        out.append(path)
    pyplot().close(fig)
    return out


def bar_figure(
    cases: Mapping[str, Mapping[str, float]], xlabel: str, title: str = "", log: bool = False
) -> Any:
    """Grouped horizontal bars: one group per case (top to bottom in the mapping's order), one
    bar per variant inside it (the benchmarks' "naive vs ours" side by side), each labelled with
    its value.

    Examples:
        >>> fig = bar_figure({"TED": {"zss": 40.0, "edist": 9000.0}}, "pairs/s", log=True)
        >>> [round(b.get_width()) for b in fig.axes[0].patches]
        [40, 9000]
    """
    variants = list(dict.fromkeys(v for row in cases.values() for v in row))
    height = 0.8 / max(1, len(variants))
    fig = new_figure(7.5, 0.6 + 0.45 * len(variants) * max(1, len(cases)))
    ax = fig.axes[0]
    colours = pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    for j, variant in enumerate(variants):
        ys, xs = [], []
        for i, row in enumerate(cases.values()):
            if variant in row:
                ys.append(i + j * height)
                xs.append(float(row[variant]))
        bars = ax.barh(ys, xs, height=height * 0.9, label=variant,
                       color=colours[j % len(colours)])  # fmt: skip
        ax.bar_label(bars, labels=[f"{x:,.3g}" for x in xs], padding=2, fontsize=7)
    ax.set_yticks([i + height * (len(variants) - 1) / 2 for i in range(len(cases))])
    ax.set_yticklabels(list(cases), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if log:
        ax.set_xscale("log")
    ax.margins(x=0.15)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def save_bars(
    stem: str | os.PathLike,
    cases: Mapping[str, Mapping[str, float]],
    xlabel: str,
    signature: str,
    title: str = "",
    log: bool = False,
) -> list[Path]:
    """:func:`bar_figure` written by :func:`save_figure` (a benchmark's figure beside its JSON:
    ``stem`` is the JSON path without its suffix)."""
    return save_figure(bar_figure(cases, xlabel, title, log=log), stem, signature)


def save_benchmark(
    out: str | os.PathLike,
    result: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, float]],
    xlabel: str,
    signature: str,
    title: str = "",
) -> Path:
    """A benchmark's result: ``out`` (JSON) and its bars beside it (``out`` without its suffix,
    PNG + PDF, :func:`save_bars`)."""
    from paraamr.utils import write_json_atomic

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, result, sort_keys=False)
    save_bars(out.with_suffix(""), cases, xlabel, signature, title)
    return out


def png_description(path: str | os.PathLike) -> str | None:
    """The ``Description`` text chunk of a PNG written by :func:`save_figure`."""
    from PIL import Image

    with Image.open(path) as im:
        return im.text.get("Description")
