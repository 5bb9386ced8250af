"""Table 5 of the ParaAMR paper: SimCSE trained on each paraphrase corpus, evaluated on STS.

The jobs (one per corpus and seed) are :func:`paraamr.simcse.job.run_job`; :func:`gather_rows`
collects a sweep's job records (``results.json``) into Table 5 rows (mean ± std over seeds).

>>> rows = gather_rows([
...     {"corpus": "A", "seed": 0, "sts": {"avg": {"pearson": 70.0, "spearman": 60.0},
...      "years": {"STS12": {"pearson": 70.0, "spearman": 60.0, "n": 5}}}},
...     {"corpus": "A", "seed": 1, "sts": {"avg": {"pearson": 72.0, "spearman": 62.0},
...      "years": {"STS12": {"pearson": 72.0, "spearman": 62.0, "n": 5}}}}])
>>> rows[0]["dataset"], rows[0]["n_seeds"], rows[0]["spearman_mean"], rows[0]["spearman_std"]
('A', 2, 61.0, 1.4142)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from paraamr.paper import PAPER_TABLE5
from paraamr.tables.render import Column, Layout
from paraamr.tables.sweep import gather_seeds
from paraamr.utils import measured_text

__all__ = [
    "gather_rows",
    "measured",
    "table5_layout",
]

log = logging.getLogger(__name__)


def gather_rows(results: Iterable[dict]) -> list[dict]:
    """Table 5 rows (:func:`paraamr.tables.sweep.gather_seeds`): per corpus, mean ± std over
    seeds of the STS12-16 average (``pearson_*``, ``spearman_*``) and of each year's Spearman
    (``<year>_spearman_*``, also as ``per_year``)."""
    results = list(results)
    years = list(results[0]["sts"]["years"]) if results else []
    metrics = {
        "pearson": lambda r: r["sts"]["avg"]["pearson"],
        "spearman": lambda r: r["sts"]["avg"]["spearman"],
    }
    for y in years:
        metrics[f"{y}_spearman"] = lambda r, y=y: r["sts"]["years"][y]["spearman"]
    rows = gather_seeds(results, metrics)
    for row in rows:
        row["per_year"] = {
            y: {
                "spearman_mean": row[f"{y}_spearman_mean"],
                "spearman_std": row[f"{y}_spearman_std"],
            }
            for y in years
        }
    return rows


def measured(results: Iterable[dict]) -> tuple[list[dict], str]:
    """The distinct date / CPU stamps of the runs (``measured`` of each ``results.json``) and
    one sentence naming them (:func:`paraamr.utils.measured_text`).

    >>> measured([{"measured": {"date": "2026-12-04", "cpu": "AMD EPYC", "cores": 2}}, {}])[1]
    'Measured 2026-12-04 on AMD EPYC (2 cores); 1 result without a date or CPU.'
    """
    stamps = [r.get("measured") for r in results]
    distinct = sorted({json.dumps(s, sort_keys=True) for s in stamps if s})
    return [json.loads(s) for s in distinct], measured_text(stamps)


def table5_layout(years: list[str], note: str, measured: str = "") -> Layout:
    """Table 5: average STS12-16 Pearson / Spearman (mean ± std), each year's Spearman;
    ``measured``: when and on what CPU the runs ran (:func:`measured`)."""
    return Layout(
        name="table5",
        title="Table 5",
        columns=(
            Column("dataset", "dataset", fmt="text"),
            Column("n_seeds", "seeds", fmt="int"),
            Column("pearson_mean", "Pearson", std="pearson_std"),
            Column("spearman_mean", "Spearman", std="spearman_std"),
            *(Column(f"{y}_spearman_mean", f"{y} ρ", std="") for y in years),
        ),
        intro=(
            f"{note}. Average STS12-16 Pearson / Spearman ×100 of SimCSE trained on each corpus "
            "(mean ± std over seeds; SentEval 'all' setting, cosine).",
            *((measured,) if measured else ()),
        ),
        paper=tuple(
            {"dataset": k, "n_seeds": 5, "pearson_mean": p, "spearman_mean": s}
            for k, (p, s) in PAPER_TABLE5.items()
        ),
        paper_source="paper (bert-base-uncased, 5 seeds)",
    )
