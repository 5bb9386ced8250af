"""Write any of the paper's tables as markdown (the paper's layout, its rows beside ours), CSV and
JSON, from one description of the table (:class:`Layout`). Tables 1, 2 and 5 use it.

>>> layout = Layout("tableX", "Table X", (Column("dataset", "dataset", fmt="text"),
...                                         Column("acc", "accuracy")),
...                 paper=({"dataset": "A", "acc": 80.0},), paper_source="paper")
>>> print(render_markdown(layout, [{"dataset": "A", "acc": 79.0, "acc_std": 0.5}],
...                       kind="offline analogue"))  # doctest: +ELLIPSIS
# Table X: offline analogue
<BLANKLINE>
| dataset | source | accuracy |
|---|---|---|
| A | ours (offline analogue) | 79.00 ± 0.50 |
| A | paper | 80.00 |
<BLANKLINE>
Our numbers use other models/parsers/data than the paper ... absolute values.
<BLANKLINE>
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paraamr.markdown import markdown_grid
from paraamr.signature import locks_named
from paraamr.utils import write_text_atomic

__all__ = [
    "Column",
    "Layout",
    "render_markdown",
    "write_table",
    "wandb_rows",
    "run_kind",
    "fmt_value",
]

OFFLINE_NOTE = (
    "Our numbers use other models/parsers/data than the paper (see signatures): "
    "compare rows with each other, not with the paper's absolute values."
)


@dataclass(frozen=True)
class Column:
    """One column: the row key, its header, and how values print (``num``: ``digits``
    decimals, ``± std`` when the row has ``<key>_std``; ``int``: thousands separators;
    ``text``: as is). ``std`` names another std key."""

    key: str
    header: str
    digits: int = 2
    fmt: str = "num"
    std: str | None = None  # the key of the std (None: <key>_std; "": no std shown)


@dataclass(frozen=True)
class Layout:
    """A table: file stem, title, columns, the paper's rows and how they are labelled."""

    name: str
    title: str
    columns: tuple[Column, ...]
    intro: tuple[str, ...] = ()
    paper: tuple[Mapping[str, Any], ...] = ()
    paper_source: str = "paper (Huang et al. 2023)"
    note: str = OFFLINE_NOTE  # printed under the table unless the rows are a reproduction
    row_notes: Callable[[Mapping[str, Any]], list[str]] | None = field(default=None, repr=False)


def run_kind(signature: str) -> str:
    """``paper settings`` when the paper's models produced the numbers, else ``offline analogue``.

    (Never "reproduction": we cannot tell from here whether the corpora are the paper's.)

    >>> run_kind("sim:cos(minilm)|parser:spacy-projection(...)")
    'offline analogue'
    """
    paper = "sim:cos(simcse)" in signature and "parser:stanza" in signature
    return "paper settings" if paper else "offline analogue"


def fmt_value(row: Mapping[str, Any], col: Column) -> str:
    """One cell (``–`` for a missing value, ``n/a`` for ``None``); a number shows ``± std``
    when the row has its std, else ``[lo, hi]`` when it has ``<key>_lo`` and ``<key>_hi``.

    >>> fmt_value({"a": 2.0, "a_lo": 1.5, "a_hi": 2.25}, Column("a", "A"))
    '2.00 [1.50, 2.25]'
    """
    if col.key not in row:
        return "–"
    v = row[col.key]
    if v is None:
        return "n/a"
    if col.fmt == "text":
        return str(v)
    if col.fmt == "int":
        return f"{int(v):,}"
    out = f"{v:.{col.digits}f}"
    std_key = f"{col.key}_std" if col.std is None else col.std
    std = row.get(std_key) if std_key else None
    if std is not None:
        return f"{out} ± {std:.{col.digits}f}"
    lo, hi = row.get(f"{col.key}_lo"), row.get(f"{col.key}_hi")
    if lo is not None and hi is not None:
        return f"{out} [{lo:.{col.digits}f}, {hi:.{col.digits}f}]"
    return out


def render_markdown(
    layout: Layout,
    rows: Sequence[Mapping[str, Any]],
    *,
    kind: str,
    description: str = "",
    footer: Sequence[str] = (),
) -> str:
    """Markdown: title, intro, our rows (labelled ``ours (<kind>)``), the paper's rows, then each
    row's signature and notes."""
    lines = [f"# {layout.title}: {kind}", ""]
    if description:
        lines.append(f"Our rows: {description}")
    lines += list(layout.intro)
    if description or layout.intro:
        lines.append("")
    head = [c.header for c in layout.columns]
    first, rest = layout.columns[0], layout.columns[1:]

    def cells(row: Mapping[str, Any], source: str) -> list[str]:
        return [fmt_value(row, first), source, *(fmt_value(row, c) for c in rest)]

    body = [cells(r, f"ours ({kind})") for r in rows]
    body += [cells(p, p.get("source", layout.paper_source)) for p in layout.paper]
    lines += markdown_grid([head[0], "source", *head[1:]], body)
    signed = [r for r in rows if r.get("signature")]
    if signed:
        lines += ["", "Signatures:", ""]
        for r in signed:
            lines.append(f"- {r[first.key]}: `{r['signature']}`")
            for note in layout.row_notes(r) if layout.row_notes else []:
                lines.append(f"  - {note}")
    if kind != "reproduction" and layout.note:
        lines += ["", layout.note]
    locks = locks_named(str(r["signature"]) for r in signed)
    if locks:
        lines += ["", f"Environment (lock): {', '.join(f'`{x}`' for x in locks)}. A lock id is "
                  "the first 12 hex digits of the SHA-256 of the `requirements/py3.X.txt` that "
                  "`make setup` installed (`+drift`: versions differed from it); `unlocked`: "
                  "`make setup UNLOCKED=1`; `none`: not installed by `make setup`."]  # fmt: skip
    lines += list(footer)
    return "\n".join(lines) + "\n"


def write_table(
    layout: Layout,
    rows: Sequence[Mapping[str, Any]],
    out_dir: str | os.PathLike,
    meta: Mapping[str, Any],
    footer: Sequence[str] = (),
) -> dict[str, Path]:
    """Write ``<name>.md``, ``<name>.csv`` (one line per row, ours then the paper's, with a
    ``source`` column) and ``<name>.json`` (``{"rows", "paper", "meta"}``) under ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kind = meta.get("run_kind", "offline analogue")
    paths = {k: out / f"{layout.name}.{k}" for k in ("md", "csv", "json")}
    paths["md"].write_text(
        render_markdown(
            layout, rows, kind=kind, description=meta.get("description", ""), footer=footer
        ),
        encoding="utf-8",
    )
    keys = [c.key for c in layout.columns]
    stds = {f"{c.key}_std" if c.std is None else c.std for c in layout.columns} - {""}
    stds |= {f"{c.key}_{end}" for c in layout.columns for end in ("lo", "hi")}
    extra = sorted({k for r in rows for k in r if k in stds and k not in keys})
    with open(paths["csv"], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("source", *keys, *extra, "signature"))
        for r in rows:
            w.writerow((f"ours ({kind})", *(r.get(k) for k in (*keys, *extra)), r.get("signature")))
        for p in layout.paper:
            label = p.get("source", layout.paper_source)
            w.writerow((label, *(p.get(k) for k in (*keys, *extra)), "paper"))
    payload = {"rows": list(rows), "paper": [dict(p) for p in layout.paper], "meta": dict(meta)}
    write_text_atomic(paths["json"], json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    return paths


def wandb_rows(
    layout: Layout, rows: Sequence[Mapping[str, Any]]
) -> tuple[list[str], list[list[Any]]]:
    """Columns and data for a ``wandb.Table``: our rows, then the paper's (``<name> (paper)``)."""
    keys = [c.key for c in layout.columns]
    cols = [*keys, "signature"]
    data = [[r.get(k) for k in cols] for r in rows]
    first = keys[0]
    for p in layout.paper:
        data.append([f"{p[first]} (paper)", *(p.get(k) for k in keys[1:]), "paper"])
    return cols, data
