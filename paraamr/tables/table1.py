"""Table 1 of the ParaAMR paper: corpus statistics (#instances, average #paraphrases per source,
average paraphrase length in words), ours beside the paper's.

>>> md = render_table1("ours", {"instances": 2, "avg_paraphrases": 3.5, "avg_source_length": 9.0,
...                              "avg_paraphrase_length": 10.25}, "tiny corpus")
>>> md.splitlines()[4]
'| ours | ours (tiny corpus) | 2 | 3.50 | 9.00 | 10.25 |'
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from paraamr.paper import PAPER_TABLE1
from paraamr.tables.render import Column, Layout, render_markdown, write_table

__all__ = ["TABLE1", "render_table1", "write_table1", "write_build_table1", "merge_corpus",
           "build_corpus"]  # fmt: skip

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


#: the column a build that parsed its sentences adds: the sources longer than the parser reads
CUT = Column("sources_cut", "sources cut (%)")


def _layout(stats: dict) -> Layout:
    if "sources_cut" not in stats:
        return TABLE1
    return replace(
        TABLE1,
        columns=(*TABLE1.columns, CUT),
        intro=(
            "Sources cut: the percentage of input sentences longer than the AMR parser reads "
            "(stog.read_tokens): their ends are not in the graph.",
        ),
    )


def render_table1(name: str, stats: dict, note: str) -> str:
    """Markdown of one corpus's statistics (``note`` names models and data) beside the paper's."""
    return render_markdown(_layout(stats), [{"dataset": name, **stats}], kind=note)


def write_table1(name: str, stats: dict, out_dir: str | os.PathLike, note: str) -> dict[str, Path]:
    """``table1.{md,csv,json}`` under ``out_dir``."""
    return write_table(_layout(stats), [{"dataset": name, **stats}], out_dir, {"run_kind": note})


def write_build_table1(out_dir: str | os.PathLike, summary: dict) -> dict[str, Path]:
    """Table 1 of a finished build (``summary`` of :func:`paraamr.builder.run.finish_build`),
    its note naming the build's models; printed with the counts."""
    from paraamr.signature import Signature

    f = Signature(summary["signature"]).fields
    note = f"stog={f['stog']}, generator={f['generator']}, lm={f['lm']}"
    paths = write_table1("ours", summary["table1"], out_dir, note)
    print(paths["md"].read_text(encoding="utf-8"))
    print(f"counts: {summary['counts']}")
    return paths


def merge_corpus(out_dir: str | os.PathLike, num_shards: int) -> dict:
    """Merge a sharded build's finished shards and write its Table 1."""
    from paraamr.builder.run import finish_build

    summary = finish_build(str(out_dir), num_shards)
    write_build_table1(out_dir, summary)
    return summary


def build_corpus(cfg) -> dict:  # noqa: ANN001 - a Hydra DictConfig
    """``experiments/build.py``: build, and write Table 1 when the shards were merged."""
    from paraamr.builder.run import run_build

    result = run_build(cfg)
    if "table1" in result:
        write_build_table1(cfg.out_dir, result)
    return result
