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
from pathlib import Path
from typing import Any

__all__ = ["new_figure", "save_figure", "png_description", "pyplot"]


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


def png_description(path: str | os.PathLike) -> str | None:
    """The ``Description`` text chunk of a PNG written by :func:`save_figure`."""
    from PIL import Image

    with Image.open(path) as im:
        return im.text.get("Description")
