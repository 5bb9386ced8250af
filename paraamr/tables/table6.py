"""Table 6 of the ParaAMR paper from the SCPN jobs' records (``results.json`` of
:func:`paraamr.scpn.job.run_job`): :func:`gather_rows` collects a sweep's jobs into rows
(mean ± std over seeds), :func:`render` writes ``table6.{md,csv,json}`` with the paper's rows
beside ours (:func:`paraamr.tables.render.write_table`), :func:`plot_table6` the figure.

>>> rows = gather_rows([
...     {"corpus": "A", "input_format": "scpn", "seed": 0, "tests": {"quora": {"bleu": 10.0}}},
...     {"corpus": "A", "input_format": "scpn", "seed": 1, "tests": {"quora": {"bleu": 12.0}}}])
>>> rows[0]["row"], rows[0]["n_seeds"], rows[0]["quora"]["bleu"]
('A', 2, {'mean': 11.0, 'std': 1.4142, 'n': 2})
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from paraamr.metrics.aggregate import mean_std
from paraamr.paper import PAPER_TABLE6
from paraamr.scpn.decoding import Decoding
from paraamr.scpn.evaluate import STAND_IN_NOTE
from paraamr.scpn.job import METRICS
from paraamr.tables.render import Column, Layout, write_table
from paraamr.tables.sweep import split_settings

__all__ = ["gather_rows", "render", "table6_layout", "flat_row", "plot_table6"]


def _row_name(r: Mapping) -> str:
    """The row a job belongs to: corpus, input format other than the default ones, and the
    settings a trained model can be evaluated with that change its outputs (the template
    depth of a tree model, ``no_repeat_words``, ``word_cap``, ``force_template``)."""
    if r["input_format"] in ("none", "scpn", "skeleton") or r["corpus"] == "copy source":
        name = r["corpus"]
    elif r["input_format"] == "noparse":
        name = f"{r['corpus']} (no parse)"
    else:
        name = f"{r['corpus']} ({r['input_format']})"
    if r.get("template_depth"):
        name += f", depth-{r['template_depth']} templates"
    return name + Decoding.of(r).row_label()


def gather_rows(results: Iterable[Mapping]) -> list[dict]:
    """Rows ``{"row", "n_seeds", "<test>": {"<metric>": {"mean", "std", "n"}}}``, one per
    (corpus, input format), seeds pooled (std 0 with one seed)."""
    groups: dict[str, list[Mapping]] = defaultdict(list)
    for r in results:
        groups[_row_name(r)].append(r)
    rows = []
    settings = [split for name, rs in groups.items() for split in split_settings(name, rs)]
    for name, rs in settings:
        row: dict[str, Any] = {"row": name, "n_seeds": len(rs),
                               "signature": rs[0].get("signature", "")}  # fmt: skip
        for test in sorted({t for r in rs for t in r["tests"]}):
            row[test] = {}
            for m in METRICS:
                vals = [r["tests"][test][m] for r in rs if m in r["tests"].get(test, {})]
                vals = [float(v) for v in vals if v is not None and not math.isnan(float(v))]
                if vals:
                    mean, std = mean_std(vals)
                    row[test][m] = {"mean": mean, "std": std, "n": len(vals)}
        rows.append(row)
    order = {"copy source": 0}
    return sorted(rows, key=lambda r: (order.get(r["row"], 1), r["row"]))


#: the per-test-set columns after BLEU: (metric key, header)
TEST_COLUMNS = (
    ("ted3", "TED-3"),
    ("tedf", "TED-F"),
    ("template_match", "match"),
    ("similarity", "sim"),
    ("one_minus_bleu_src", "1-BLEU src"),
)
TESTS = ("quora", "mrpc", "pan")  # the order of the paper's BLEU columns (PAPER_TABLE6)


def table6_layout(tests: Iterable[str] = TESTS, controlled: Iterable[str] = ()) -> Layout:
    """The :class:`~paraamr.tables.render.Layout` of Table 6 for these test sets: BLEU per test
    set, then TED-3 / TED-F / template match / similarity / 1-BLEU to the source per test set,
    then the parse-control gain where it was measured; the paper's BLEU rows beside ours."""
    tests = list(tests)
    cols = [Column("row", "row", fmt="text"), Column("n_seeds", "seeds", fmt="int")]
    cols += [Column(f"bleu_{t}", f"BLEU {t}") for t in tests]
    cols += [Column(f"{m}_{t}", f"{h} {t}") for t in tests for m, h in TEST_COLUMNS]
    cols += [Column(f"control_gain_{t}", f"control gain {t}") for t in controlled]
    paper = tuple(
        {"row": name, "n_seeds": 5, **{f"bleu_{t}": v for t, v in zip(TESTS, vals, strict=True)}}
        for name, vals in PAPER_TABLE6.items()
    )
    return Layout(
        "table6",
        "Table 6: syntactically controlled paraphrase generation (BLEU)",
        tuple(cols),
        intro=(f"Note: {STAND_IN_NOTE}.",),
        paper=paper,
        paper_source="paper (Huang et al. 2023, Table 6)",
    )


def flat_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A :func:`gather_rows` row as table cells: ``<metric>_<test>`` means and, over more
    than one seed, ``<metric>_<test>_std``.

    Examples:
        >>> flat_row({"row": "A", "n_seeds": 2, "signature": "s",
        ...           "quora": {"bleu": {"mean": 11.0, "std": 1.41, "n": 2}}})
        {'row': 'A', 'n_seeds': 2, 'signature': 's', 'bleu_quora': 11.0, 'bleu_quora_std': 1.41}
    """
    out = {k: row[k] for k in ("row", "n_seeds", "signature") if k in row}
    for test, cells in row.items():
        if not isinstance(cells, Mapping):
            continue
        for m, cell in cells.items():
            out[f"{m}_{test}"] = cell["mean"]
            if cell["n"] > 1:
                out[f"{m}_{test}_std"] = cell["std"]
    return out


def render(rows: list[dict], out_dir: str | Path, tests: Iterable[str] = TESTS) -> dict[str, Path]:
    """Write ``table6.{md,csv,json}`` (:func:`paraamr.tables.render.write_table` with
    :func:`table6_layout`); returns the paths. The parse-control gain gets a column for each
    test set where some run measured it."""
    tests = list(tests)
    controlled = [t for t in tests if any("control_gain" in r.get(t, {}) for r in rows)]
    paper_models = rows and all("scpn:model:facebook/bart" in r.get("signature", "") for r in rows)
    kind = "paper models, stand-in test sets" if paper_models else "offline analogue"
    meta = {"run_kind": kind, "tests": tests}
    return write_table(table6_layout(tests, controlled), [flat_row(r) for r in rows], out_dir, meta)


def plot_table6(rows: list[dict], stem: str | Path, tests: Iterable[str] = TESTS) -> list[Path]:
    """``<stem>.{png,pdf}``: per test set, BLEU against TED-3 to the target parse (one point
    per row: up and left is better), and the control gain of each row (bars; a model that
    follows its parse gains, copying the source does not)."""
    from paraamr.figures import new_figure, save_figure

    tests = [t for t in tests if any(t in r for r in rows)]
    fig = new_figure(4.2 * (len(tests) + 1), 3.4, ncols=len(tests) + 1)
    for ax, t in zip(fig.axes, tests, strict=False):
        for i, r in enumerate(rows):
            cell = r.get(t, {})
            if "bleu" in cell and "ted3" in cell:
                b, d = cell["bleu"], cell["ted3"]
                ax.errorbar(b["mean"], d["mean"], xerr=b["std"], yerr=d["std"], fmt="o",
                            color=f"C{i}", label=r["row"])  # fmt: skip
        ax.set_xlabel("BLEU to the reference")
        ax.set_ylabel("TED-3 to the target parse (lower: follows)")
        ax.set_title(t, fontsize=9)
    fig.axes[0].legend(fontsize=6)
    ax = fig.axes[-1]
    width = 0.8 / max(1, len(tests))
    for j, t in enumerate(tests):
        gains = [r.get(t, {}).get("control_gain") for r in rows]
        xs = [i + j * width for i in range(len(rows))]
        ax.bar(xs, [g["mean"] if g else 0.0 for g in gains], width,
               yerr=[g["std"] if g else 0.0 for g in gains], label=t)  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks([i + width * (len(tests) - 1) / 2 for i in range(len(rows))],
                  [r["row"] for r in rows], rotation=20, fontsize=6, ha="right")  # fmt: skip
    ax.set_ylabel("control gain (TED-3 edits)")
    ax.legend(fontsize=7)
    sig = "\n".join(f"{r['row']}: {r.get('signature', '')}" for r in rows)
    return save_figure(fig, stem, sig)
