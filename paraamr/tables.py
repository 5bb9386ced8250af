"""Write Table 2 as markdown (the paper's layout, paper numbers beside ours), CSV and JSON."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from pathlib import Path

from paraamr.table2 import PAPER_TABLE2

__all__ = ["write_table2", "render_table2_markdown", "TABLE2_COLUMNS", "run_kind"]

TABLE2_COLUMNS = (
    "dataset",
    "n_sources",
    "n_pairs",
    "similarity",
    "one_minus_bleu",
    "one_minus_iou",
    "ted3",
    "tedf",
    "signature",
)
_HEAD = ("similarity", "1−BLEU", "1−∩/∪", "TED-3", "TED-F")
_KEYS = ("similarity", "one_minus_bleu", "one_minus_iou", "ted3", "tedf")
_OPTIONAL = {"self_bleu": "Self-BLEU"}  # shown when a row has it (metrics.self_bleu=true)


def _columns(rows: Sequence[dict]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(headers, keys) of the metric columns: the paper's five, then optional ones present."""
    extra = [k for k in _OPTIONAL if any(r.get(k) is not None for r in rows)]
    return _HEAD + tuple(_OPTIONAL[k] for k in extra), _KEYS + tuple(extra)


def run_kind(signature: str) -> str:
    """``paper settings`` when the paper's models produced the numbers, else ``offline analogue``.

    (Never "reproduction": we cannot tell from here whether the corpora are the paper's.)

    >>> run_kind("sim:cos(minilm)|parser:spacy-projection(...)")
    'offline analogue'
    """
    paper = "sim:cos(simcse)" in signature and "parser:stanza" in signature
    return "paper settings" if paper else "offline analogue"


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def render_table2_markdown(rows: Sequence[dict], meta: dict) -> str:
    """Markdown with our rows (labelled with the run kind) then the paper's rows."""
    kind = meta.get("run_kind", "offline analogue")
    head, keys = _columns(rows)
    lines = [
        f"# Table 2: {kind}",
        "",
        f"Our rows: {meta.get('description', '')}",
        "Similarity, 1−BLEU and 1−∩/∪ in percent; TED-3 / TED-F in edit operations "
        "(mean over a source's paraphrases, then over sources)."
        + (" Self-BLEU in percent (lower: more diverse)." if "self_bleu" in keys else ""),
        "",
        "| dataset | source | #sources | #pairs | " + " | ".join(head) + " |",
        "|---|---|---|---|" + "---|" * len(head),
    ]
    for r in rows:
        vals = " | ".join(_fmt(r.get(k)) for k in keys)
        lines.append(
            f"| {r['dataset']} | ours ({kind}) | {r['n_sources']} | {r['n_pairs']} | {vals} |"
        )
    for name, paper in PAPER_TABLE2.items():
        vals = " | ".join(_fmt(paper.get(k)) for k in keys)
        lines.append(f"| {name} | paper (Huang et al. 2023, Table 2) | 193,869 | – | {vals} |")
    lines += ["", "Signatures:", ""]
    for r in rows:
        lines.append(f"- {r['dataset']}: `{r['signature']}`")
        ci = {k: r[f"{k}_ci95"] for k in keys if f"{k}_ci95" in r}
        if ci:
            lines.append(f"  - 95% bootstrap CI: {ci}")
        if r.get("skipped") or r.get("dropped_identical"):
            lines.append(
                f"  - dropped identical paraphrases: {r.get('dropped_identical', 0)}; "
                f"skipped: {r.get('skipped') or 'none'}"
            )
    if kind != "reproduction":
        lines += [
            "",
            "Our numbers use other models/parsers/data than the paper (see signatures): "
            "compare corpora with each other, not with the paper's absolute values.",
        ]
    return "\n".join(lines) + "\n"


def write_table2(rows: Sequence[dict], out_dir: str | os.PathLike, meta: dict) -> dict[str, Path]:
    """Write ``table2.md``, ``table2.csv`` and ``table2.json`` under ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f"table2.{k}" for k in ("md", "csv", "json")}
    paths["md"].write_text(render_table2_markdown(rows, meta), encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("source", *TABLE2_COLUMNS))
        for r in rows:
            w.writerow(
                (
                    f"ours ({meta.get('run_kind', 'offline analogue')})",
                    *(r.get(k) for k in TABLE2_COLUMNS),
                )
            )
        for name, paper in PAPER_TABLE2.items():
            w.writerow(("paper", name, 193869, None, *(paper[k] for k in _KEYS), "paper"))
    payload = {
        "rows": [{k: r.get(k) for k in TABLE2_COLUMNS} | _extras(r) for r in rows],
        "paper": [{"dataset": k, **v} for k, v in PAPER_TABLE2.items()],
        "meta": meta,
    }
    paths["json"].write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return paths


def _extras(r: dict) -> dict:
    return {k: v for k, v in r.items() if k not in TABLE2_COLUMNS}
