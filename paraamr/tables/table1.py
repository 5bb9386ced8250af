"""Table 1 of the ParaAMR paper: corpus statistics (#instances, average #paraphrases per source,
average paraphrase length in words), ours beside the paper's.

>>> md = render_table1("ours", {"instances": 2, "avg_paraphrases": 3.5, "avg_source_length": 9.0,
...                              "avg_paraphrase_length": 10.25}, "tiny corpus")
>>> md.splitlines()[4]
'| ours | ours (tiny corpus) | 2 | 3.50 | 9.00 | 10.25 |'
"""

from __future__ import annotations

import os
from pathlib import Path

from paraamr.paper import PAPER_TABLE1
from paraamr.tables.render import Column, Layout, render_markdown, write_table

__all__ = ["TABLE1", "render_table1", "write_table1"]

TABLE1 = Layout(
    name="table1",
    title="Table 1",
    columns=(
        Column("dataset", "dataset", fmt="text"),
        Column("instances", "#instances", fmt="int"),
        Column("avg_paraphrases", "avg #paraphrases"),
        Column("avg_source_length", "avg length (source)"),
        Column("avg_paraphrase_length", "avg length (paraphrase)"),
    ),
    paper=tuple(
        {"dataset": k, "instances": n, "avg_paraphrases": a, "avg_paraphrase_length": length}
        for k, (n, a, length) in PAPER_TABLE1.items()
    ),
    paper_source="paper (Huang et al. 2023, Table 1)",
)


def render_table1(name: str, stats: dict, note: str) -> str:
    """Markdown of one corpus's statistics (``note`` names models and data) beside the paper's."""
    return render_markdown(TABLE1, [{"dataset": name, **stats}], kind=note)


def write_table1(name: str, stats: dict, out_dir: str | os.PathLike, note: str) -> dict[str, Path]:
    """``table1.{md,csv,json}`` under ``out_dir``."""
    return write_table(TABLE1, [{"dataset": name, **stats}], out_dir, {"run_kind": note})
