"""Table 4 of the ParaAMR paper (human evaluation), written from scored judgements
(:mod:`paraamr.humaneval.score`): ``table4.{md,csv,json}``, ``agreement.{md,json}`` inside the
markdown, ``table4_shares.{png,pdf}`` and a W&B run in group ``table4``.

JSON rows are ``{corpus, question, share_3, share_2, share_1, average, n_items, n_judgements}``
(shares in percent, ``question`` in ``similarity``/``diversity``) plus ``<stat>_lo``/``_hi``,
the 95% bootstrap interval over items.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from paraamr.corpus.specs import CorpusSpec
from paraamr.humaneval.score import Scored
from paraamr.markdown import markdown_grid
from paraamr.paper import PAPER_TABLE4
from paraamr.tables.render import Column, Layout, wandb_rows, write_table
from paraamr.tracking import log_table, wandb_run

__all__ = ["TABLE4", "write_table4", "plot_shares", "sample_kit", "score_kit"]

TABLE4 = Layout(
    "table4",
    "Table 4 (human evaluation)",
    (
        Column("corpus", "dataset", fmt="text"),
        Column("question", "question", fmt="text"),
        Column("share_3", "3 (%)", digits=1),
        Column("share_2", "2 (%)", digits=1),
        Column("share_1", "1 (%)", digits=1),
        Column("average", "average"),
        Column("n_items", "items", fmt="int"),
        Column("n_judgements", "judgements", fmt="int"),
    ),
    intro=(
        "Share of judgements scoring 3 / 2 / 1 and the average, per corpus and question; "
        "[95% bootstrap interval over items].",
    ),
    paper=tuple(
        {
            "corpus": c,
            "question": q,
            "share_3": v[0],
            "share_2": v[1],
            "share_1": v[2],
            "average": v[3],
        }
        for q, rows in PAPER_TABLE4.items()
        for c, v in rows.items()
    ),  # fmt: skip
    paper_source="paper (Huang et al. 2023, Table 4)",
    note=(
        "Our rows are our annotators' judgements of our corpora's sample; the paper's are three "
        "MTurk workers on 300 pairs of each released corpus. Compare our corpora with each other."
    ),
)


def _fmt(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def agreement_markdown(scored: Scored) -> list[str]:
    """Agreement, attention checks and counts, as markdown lines under the table."""
    lines = ["", "## Agreement", ""]
    lines += markdown_grid(
        ["question", "corpus", "Krippendorff's alpha (ordinal)", "full agreement (%)",
         "items with 2+ judgements", "annotators"],
        [[a["question"], a["corpus"], _fmt(a["alpha_ordinal"]), _fmt(a["full_agreement"], 1),
          a["n_multi_items"], a["n_annotators"]] for a in scored.agreement],
    )  # fmt: skip
    if scored.checks:
        lines += ["", "## Attention checks", ""]
        lines += markdown_grid(
            ["annotator", "answered", "failed"],
            [[c["annotator"], c["checks_answered"], c["checks_failed"]] for c in scored.checks],
        )
    c = scored.counts
    skipped = c["skipped"]["total"]
    lines += [
        "",
        f"Read {c['judgements_read']} judgements from {c['files']} file(s); scored "
        f"{c['judgements_scored']} from {c['annotators']} annotator(s); "
        f"{c['judgements_on_checks']} on attention checks; {c['rejected_assignments']} rejected "
        f"MTurk assignment(s) left out; {skipped} judgement(s) skipped"
        + (f" ({c['skipped']['by_reason']})" if skipped else "")
        + f"; {c['items_never_judged']} item(s) never judged"
        + (
            f"; annotators excluded by failed checks: {', '.join(c['excluded_annotators'])}"
            if c["excluded_annotators"]
            else ""
        )  # fmt: skip
        + ".",
    ]
    return lines


def plot_shares(rows: list[dict], path: str | Path, signature: str = "") -> list[Path]:
    """Stacked bars: per question a panel, per corpus a bar of the shares of 1, 2 and 3."""
    from paraamr.figures import new_figure, save_figure

    questions = list(dict.fromkeys(r["question"] for r in rows))
    n_corpora = len({r["corpus"] for r in rows})
    fig = new_figure(4.2 * len(questions), 0.9 + 0.5 * n_corpora, ncols=len(questions),
                     sharey=True)  # fmt: skip
    axes = [fig.axes]
    colours = {1: "#c8553d", 2: "#f2d0a4", 3: "#588b8b"}
    for ax, q in zip(axes[0], questions, strict=True):
        sel = [r for r in rows if r["question"] == q and r.get("average") is not None]
        names = [r["corpus"] for r in sel]
        left = [0.0] * len(sel)
        for s in (1, 2, 3):
            vals = [r[f"share_{s}"] for r in sel]
            ax.barh(names, vals, left=left, color=colours[s], label=str(s))
            left = [a + b for a, b in zip(left, vals, strict=True)]
        for y, r in enumerate(sel):
            ax.text(101, y, f"{r['average']:.2f}", va="center", fontsize=8)
        ax.set_xlim(0, 112)
        ax.set_xlabel("share of judgements (%)")
        ax.set_title(q)
        ax.invert_yaxis()
    axes[0][0].legend(title="score", fontsize=7, title_fontsize=7, loc="lower left")
    return save_figure(fig, path, signature)


def write_table4(scored: Scored, out_dir: str | os.PathLike, wandb: bool = True) -> dict:
    """Write the table, the figure and the W&B run; return the paths."""
    out = Path(out_dir)
    meta = {
        "run_kind": "our annotators",
        "description": f"kit {scored.kit.id} ({scored.kit.manifest.get('signature', '')})",
        "kit": scored.kit.manifest,
        "agreement": scored.agreement,
        "attention_checks": scored.checks,
        "counts": scored.counts,
    }
    rows = scored.rows
    paths = write_table(TABLE4, rows, out, meta, footer=agreement_markdown(scored))
    if any(r.get("average") is not None for r in rows):
        sig = scored.kit.manifest.get("signature", "")
        paths["figure"] = plot_shares(rows, out / "table4_shares", sig)
    with wandb_run(project="paraamr", group="table4", name=f"table4-{scored.kit.id}",
                   config={"kit": scored.kit.manifest}, directory=str(out),
                   enabled=wandb) as run:  # fmt: skip
        if run is not None:
            cols, data = wandb_rows(TABLE4, rows)
            log_table(run, "table4", cols, data)
            for r in rows:
                if r.get("average") is not None:
                    run.summary[f"{r['corpus']}/{r['question']}/average"] = r["average"]
            for a in scored.agreement:
                if a["corpus"] == "all":
                    run.summary[f"alpha/{a['question']}"] = a["alpha_ordinal"]
    return paths


def sample_kit(
    specs: Sequence[CorpusSpec],
    out: str | os.PathLike,
    n: int = 300,
    seed: int = 0,
    checks: int = 0,
    on_error: str = "raise",
) -> dict[str, Path]:
    """``paraamr humaneval sample``: draw the blind sample of ``specs`` and write the kit."""
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.corpus.readers import read_corpus
    from paraamr.humaneval.kit import write_kit
    from paraamr.humaneval.sample import draw_sample

    skips = SkipLog(on_error, hint=CLI_HINT)
    corpora = {s.name: (lambda s=s: read_corpus(s.path, s.fmt, skips)) for s in specs}
    sample = draw_sample(corpora, n=n, seed=seed, checks=checks)
    files = {s.name: f"{s.path}" + (f":{s.fmt}" if s.fmt else "") for s in specs}
    return write_kit(sample, out, files)


def score_kit(
    kit_dir: str | os.PathLike,
    results: Sequence[str],
    out: str | os.PathLike,
    on_error: str = "raise",
    bootstrap: int = 1000,
    seed: int = 0,
    max_failed_checks: int | None = None,
    wandb: bool = True,
) -> tuple[Scored, dict]:
    """``paraamr humaneval score``: read the answers, score them against the kit, write Table 4."""
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.humaneval.answers import read_answers
    from paraamr.humaneval.score import load_kit, score_answers

    kit = load_kit(kit_dir)
    skips = SkipLog(on_error, hint=CLI_HINT)
    answers = read_answers(list(results), skips)
    scored = score_answers(kit, answers, skips, bootstrap, seed, max_failed_checks)
    return scored, write_table4(scored, out, wandb=wandb)
