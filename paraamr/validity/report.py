"""Write the validity report: ``validity.json``, ``validity.md``, ``pairs.tsv``, plots, W&B.

Plots (PNG): ``metric_vs_human.png`` (each measure against the mean human meaning score),
``correlations.png`` (Spearman with 95% intervals against the human ceiling), ``roc.png``
(fluent vs not, perplexity and NLL) and ``perplexity_hist.png`` (perplexity by fluency class,
with the keep-90%/95% thresholds and the paper's GPT-2 thresholds).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from paraamr.markdown import markdown_grid
from paraamr.utils import measured_on, measured_text, write_text_atomic
from paraamr.validity.judgements import Item
from paraamr.validity.measures import DIRECTION, MEASURES, Measures

__all__ = ["write_report", "render_markdown", "log_wandb", "correlation_rows"]

LABELS = {
    "similarity": "similarity (cosine)",
    "bleu": "BLEU vs source",
    "bleu_sacrebleu": "sacreBLEU (smoothed) vs source",
    "iou": "IoU vs source",
    "ted3": "TED-3",
    "tedf": "TED-F",
    "perplexity": "perplexity",
    "nll": "file's NLL",
}


def _f(x, nd: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{nd}f}"


def _ci(c: dict, nd: int = 3) -> str:
    return f"{_f(c['value'], nd)} [{_f(c['lo'], nd)}, {_f(c['hi'], nd)}]"


def correlation_rows(result: dict) -> list[list]:
    """Flat rows ``measure, subset, method, value, lo, hi, n_items, n_sources, signature``."""
    rows = []
    for m, by in result["meaning"].items():
        for sub, meths in by.items():
            for meth, c in meths.items():
                rows.append(
                    [m, sub, meth, c["value"], c["lo"], c["hi"], c["n_items"], c["n_sources"]]
                    + [result["signatures"].get(m, "")]
                )
    return rows


def _measures_in(result: dict) -> list[str]:
    return [m for m in MEASURES if m in result["meaning"]]


def render_markdown(result: dict) -> str:
    d, sig = result["data"], result["signatures"]
    buckets = [k for k in result["subset_sizes"] if k != "all"]
    cfg = result.get("config", {})
    lines = [
        "# Do the metrics agree with people? (validity report)",
        "",
        f"Data: `{d['description']}`. {result['n_items']} judged (source, paraphrase) pairs of "
        f"{d['sources']} sources after excluding {d['copies_excluded']} copies of the source; "
        f"{d['judgements']} judgements ({d['judges_per_item_mean']:.2f} per pair; "
        f"{d['judgements_without_meaning']} without a meaning score, judged nonsensical); "
        f"{d['skips']['total']} rows skipped. Mean human meaning score "
        f"{result['human_meaning']['mean']:.1f} (sd {result['human_meaning']['sd']:.1f}).",
        "",
        *((measured_text([result["measured"]]), "") if result.get("measured") else ()),
        "Offline analogue: the measures use "
        f"similarity=`{cfg.get('similarity', {}).get('name', '?')}`, the "
        f"`{sig['ted3'].split('|parser:')[1].split('|')[0]}` parser and LM "
        f"`{cfg.get('perplexity', {}).get('model')}`, "
        "not the paper's models (see the signatures below).",
        "",
        "## Meaning: rank correlation with the mean human score",
        "",
        f"Spearman ρ and Kendall τ-b over pairs, 95% intervals from "
        f"{result['settings']['n_boot']} (Kendall: {result['settings'].get('n_boot_kendall')}) "
        "bootstrap resamples of sources. `closer` says which sign "
        "means the measure agrees with people (distances should correlate negatively).",
        "",
    ]
    body = []
    for m in _measures_in(result):
        by = result["meaning"][m]
        a = by["all"]
        sign = {1: "higher", -1: "lower"}[DIRECTION[m]]
        if m == "perplexity":
            sign = "(fluency)"
        cells = [_f(by[b]["spearman"]["value"]) if b in by else "–" for b in buckets]
        body.append([LABELS[m], sign, _ci(a["spearman"]), _ci(a["kendall"]), *cells,
                     a["spearman"]["n_items"]])  # fmt: skip
    ce = result["ceiling"]
    body.append(["*human ceiling* (√ split-half, SB)", "", _f(ce["all"]["spearman"]["ceiling"]),
                 _f(ce["all"]["kendall"]["ceiling"]),
                 *(_f(ce[b]["spearman"]["ceiling"]) for b in buckets),
                 ce["all"]["spearman"]["n_items"]])  # fmt: skip
    head = ["measure", "closer", "Spearman ρ [95% CI]", "Kendall τ [95% CI]",
            *(f"ρ {b} words" for b in buckets), "pairs"]  # fmt: skip
    lines += markdown_grid(head, body)
    lines += [
        "",
        "## Human ceiling: split-half agreement of the judges",
        "",
        f"Each pair's judgements split at random into two halves ({result['settings']['n_splits']}"
        " splits); the halves' mean scores correlated across pairs (r half), stepped up to the "
        "full panel with Spearman-Brown (r full = 2r/(1+r), range = 2.5–97.5% over splits). "
        "A measure equal to the true score would correlate with the judges' mean at about √r full "
        "(the ceiling above); r full is what a second panel of people would reach.",
        "",
    ]
    body = []
    for name, by in ce.items():
        sp, k = by["spearman"], by["kendall"]
        body.append([name if name == "all" else name + " words", sp["n_items"],
                     f"{sp['judgements_per_item']:.2f}", _f(sp["r_half"]),
                     f"{_f(sp['r_full'])} [{_f(sp['r_full_lo'])}, {_f(sp['r_full_hi'])}]",
                     _f(sp["ceiling"]), _f(k["r_full"])])  # fmt: skip
    lines += markdown_grid(
        ["subset", "pairs (≥2 judgements)", "judgements/pair", "Spearman r half",
         "Spearman r full [range]", "√r full", "Kendall r full"],
        body,
    )  # fmt: skip
    fl = result["fluency"]
    lines += ["", "## Fluency and the perplexity filter", "", f"{fl['definition']}.", ""]
    cc = fl["class_counts"]
    lines.append(
        "Pairs by fluency class (lower median gm): "
        + ", ".join(f"{k}: {v}" for k, v in cc.items())
        + "."
    )
    if fl["auc"]:
        lines += [
            "",
            "ROC AUC for fluent vs not (95% CI, sources resampled):",
            "",
        ]
        body = [
            [LABELS[m], f"{_f(by['all']['auc'])} [{_f(by['all']['lo'])}, {_f(by['all']['hi'])}]",
             *(_f(by[b]["auc"]) if b in by else "–" for b in buckets)]
            for m, by in fl["auc"].items()
        ]  # fmt: skip
        lines += markdown_grid(["measure", "all", *(f"{b} words" for b in buckets)], body)
    if "keep_thresholds" in fl:
        jl = fl["auc_judgement_level"]
        lines += [
            "",
            f"Judgement level (each of {jl['n_judgements']} judgements' gm = 2 vs not, against "
            f"its paraphrase's perplexity): AUC {_f(jl['perplexity'])}. Median perplexity by "
            "class: "
            + ", ".join(f"{k}: {_f(v, 1)}" for k, v in fl["perplexity_median_by_class"].items())
            + (
                f"; median perplexity of the sources themselves: "
                f"{_f(fl['source_perplexity_median'], 1)}."
                if "source_perplexity_median" in fl
                else "."
            ),
            "",
            "A filter keeps a paraphrase when perplexity ≤ threshold:",
            "",
        ]
        body = [[_f(t["threshold"], 1), f"keeps {t['keep']:.0%} of fluent",
                 f"{t['kept_fluent']:.1%}", f"{t['dropped_not_fluent']:.1%}",
                 f"{t['dropped_all']:.1%}"] for t in fl["keep_thresholds"]]  # fmt: skip
        body += [[_f(t["threshold"], 0), "the paper's (GPT-2 units)", f"{t['kept_fluent']:.1%}",
                  f"{t['dropped_not_fluent']:.1%}", f"{t['dropped_all']:.1%}"]
                 for t in fl["paper_thresholds"]]  # fmt: skip
        head = ["threshold", "chosen as", "fluent kept", "not-fluent dropped", "all dropped"]
        lines += markdown_grid(head, body)
        lines += ["", f"**{fl['paper_thresholds_note']}**", ""]
        kb = fl["keep_thresholds_by_bucket"]
        if kb:
            keeps = list(next(iter(kb.values())))
            lines += [
                "Thresholds by source length (perplexity falls with length, so one threshold "
                "is a different filter for short and long sentences):",
                "",
            ]
            lines += markdown_grid(
                ["keep of fluent", *(f"{b} words" for b in kb)],
                [[f"{float(k):.0%}", *(_f(kb[b][k], 1) for b in kb)] for k in keeps],
            )
    lines += ["", "## Where the measures and people disagree most", ""]
    shown = ["similarity", "bleu", "ted3", "perplexity_vs_fluency"]
    for m in shown:
        ex = result["disagreements"].get(m)
        if not ex:
            continue
        what = "mean gm" if m == "perplexity_vs_fluency" else "human"
        name = "perplexity vs fluency" if m == "perplexity_vs_fluency" else LABELS[m]
        lines += [
            f"### {name}",
            "",
        ]
        body = [[f"{label} than people", _md(e["source"]), _md(e["paraphrase"]),
                 _f(e["value"], 3), _f(e["human"], 1), f"`{e['where']}`"]
                for side, label in (("measure_high", "better"), ("measure_low", "worse"))
                for e in ex[side]]  # fmt: skip
        head = ["measure says", "source", "paraphrase", "value", what, "file:line"]
        lines += markdown_grid(head, body)
        lines.append("")
    lines += ["## Signatures", ""]
    for m in _measures_in(result):
        lines.append(f"- **{m}**: `{sig[m]}`")
    if result.get("measure_failures"):
        lines += ["", f"Measure failures (pairs left out): `{result['measure_failures']}`"]
    if "timing_s" in result:
        lines += ["", "## Run", "", f"Seconds: `{result['timing_s']}`"]
        if "perplexity_cache" in result:
            pc = result["perplexity_cache"]
            lines.append(
                f"Perplexity cache `{pc['path']}`: {pc['sentences_from_cache']} sentences from the "
                f"cache, {pc['sentences_scored']} scored in this run."
            )
    return "\n".join(lines) + "\n"


def _md(text: str, width: int = 140) -> str:
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("|", "\\|")


def _pairs_tsv(items: Sequence[Item], measures: Measures, path: Path) -> None:
    cols = ["source_id", "bucket", "source", "paraphrase", "human", "n_judgements", "fluency_class"]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\t".join(cols + list(measures.values)) + "\n")
        for k, it in enumerate(items):
            row = [
                it.source_id,
                it.bucket,
                it.source,
                it.paraphrase,
                "" if it.meaning is None else f"{it.meaning:.4f}",
                len(it.judgements),
                "" if it.fluency_class is None else it.fluency_class,
            ]
            row += [f"{v[k]:.6g}" if np.isfinite(v[k]) else "" for v in measures.values.values()]
            fh.write("\t".join(map(str, row)) + "\n")


def _plots(result: dict, items: Sequence[Item], measures: Measures, out: Path) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paraamr.figures import save_figure
    from paraamr.validity.fluency import roc_curve

    paths: dict[str, Path] = {}
    sig = "\n".join(f"{m}: {v}" for m, v in result.get("signatures", {}).items())
    human = np.array([np.nan if it.meaning is None else it.meaning for it in items])
    ms = _measures_in(result)

    cols = 4
    rows = math.ceil(len(ms) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.4 * rows), squeeze=False)
    for ax, m in zip(axes.flat, ms, strict=False):
        v = measures.values[m]
        ok = np.isfinite(v) & np.isfinite(human)
        ax.scatter(v[ok], human[ok], s=3, alpha=0.25, rasterized=True)
        if m == "perplexity":
            ax.set_xscale("log")
        c = result["meaning"][m]["all"]["spearman"]
        ax.set_title(
            f"{LABELS[m]}\nρ = {c['value']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]", fontsize=9
        )
        ax.set_xlabel(m)
        ax.set_ylabel("mean human meaning score")
    for ax in list(axes.flat)[len(ms) :]:
        ax.axis("off")
    fig.tight_layout()
    paths["metric_vs_human"] = out / "metric_vs_human.png"
    save_figure(fig, paths["metric_vs_human"].with_suffix(""), sig, dpi=110)

    fig, ax = plt.subplots(figsize=(8, 4))
    vals = [DIRECTION[m] * result["meaning"][m]["all"]["spearman"]["value"] for m in ms]
    lo = [DIRECTION[m] * result["meaning"][m]["all"]["spearman"][k] for m in ms for k in ("lo",)]
    hi = [DIRECTION[m] * result["meaning"][m]["all"]["spearman"]["hi"] for m in ms]
    err = np.abs(np.array([np.array(vals) - np.minimum(lo, hi), np.maximum(lo, hi) - vals]))
    ax.bar(range(len(ms)), vals, yerr=err, capsize=3, color="tab:blue")
    ce = result["ceiling"]["all"]["spearman"]
    ax.axhline(
        ce["ceiling"], color="tab:red", ls="--", label=f"human ceiling √r = {ce['ceiling']:.3f}"
    )
    ax.axhline(
        ce["r_full"], color="tab:orange", ls=":", label=f"split-half r full = {ce['r_full']:.3f}"
    )
    ax.set_xticks(range(len(ms)), [LABELS[m] for m in ms], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Spearman ρ with human meaning\n(sign flipped for distances)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths["correlations"] = out / "correlations.png"
    save_figure(fig, paths["correlations"].with_suffix(""), sig, dpi=110)

    fl = result["fluency"]
    fluent = np.array([bool(it.fluent) for it in items])
    has = np.array([it.fluent is not None for it in items])
    if fl["auc"]:
        fig, ax = plt.subplots(figsize=(4.8, 4.5))
        for m in fl["auc"]:
            v = measures.values[m]
            fpr, tpr, _ = roc_curve(-v[has], fluent[has])
            ax.plot(fpr, tpr, label=f"{LABELS[m]} (AUC {fl['auc'][m]['all']['auc']:.3f})")
        if "keep_thresholds" in fl:
            for t in fl["keep_thresholds"] + fl["paper_thresholds"]:
                x, y = 1 - t["dropped_not_fluent"], t["kept_fluent"]
                ax.plot([x], [y], "o", ms=4, color="k")
                ax.annotate(
                    f"{t['threshold']:.0f}",
                    (x, y),
                    fontsize=7,
                    xytext=(3, -9),
                    textcoords="offset points",
                )
        ax.plot([0, 1], [0, 1], color="grey", lw=0.6, ls="--")
        ax.set_xlabel("not-fluent kept (false positive rate)")
        ax.set_ylabel("fluent kept (true positive rate)")
        ax.set_title("fluent (gm = 2 majority) vs not", fontsize=9)
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        paths["roc"] = out / "roc.png"
        save_figure(fig, paths["roc"].with_suffix(""), sig, dpi=110)
    if "keep_thresholds" in fl:
        ppl = measures.values["perplexity"]
        cls = np.array([-1 if it.fluency_class is None else it.fluency_class for it in items])
        fig, ax = plt.subplots(figsize=(7, 4))
        lp = np.log10(ppl)
        bins = np.linspace(np.nanmin(lp), np.nanmax(lp), 50)
        names = {0: "0 nonsensical", 1: "1 ungrammatical", 2: "2 fluent"}
        for k in (2, 1, 0):
            sel = (cls == k) & np.isfinite(lp)
            if sel.any():
                ax.hist(
                    lp[sel], bins=bins, density=True, alpha=0.45, label=f"{names[k]} ({sel.sum()})"
                )
        top = ax.get_ylim()[1]
        for j, t in enumerate(fl["keep_thresholds"]):
            ax.axvline(np.log10(t["threshold"]), color="k", ls="--", lw=0.8)
            ax.text(
                np.log10(t["threshold"]),
                top * (0.92 - 0.08 * j),
                f" keep {t['keep']:.0%}",
                fontsize=7,
            )
        for t in fl["paper_thresholds"]:
            ax.axvline(np.log10(t["threshold"]), color="tab:red", ls=":", lw=0.8)
        lm = result.get("config", {}).get("perplexity", {}).get("model", "LM")
        ax.set_xlabel(f"log10 perplexity ({lm}); red: the paper's 120/110/85 (GPT-2 units)")
        ax.set_ylabel("density")
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths["perplexity_hist"] = out / "perplexity_hist.png"
        save_figure(fig, paths["perplexity_hist"].with_suffix(""), sig, dpi=110)
    return paths


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if isinstance(x, np.generic):
        return _json_safe(x.item())
    return x


def write_report(
    result: dict,
    items: Sequence[Item],
    measures: Measures,
    out_dir: str | os.PathLike,
    plots: bool = True,
) -> dict[str, Path]:
    """Write ``validity.json``, ``validity.md``, ``pairs.tsv`` and (``plots``) the PNGs; the
    result gets the date and the CPU of the run (``measured``, :func:`paraamr.utils.measured_on`)
    unless it has them."""
    result.setdefault("measured", measured_on())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "validity.json", "md": out / "validity.md", "pairs": out / "pairs.tsv"}
    write_text_atomic(paths["json"], json.dumps(_json_safe(result), indent=2, ensure_ascii=False))
    paths["md"].write_text(render_markdown(result), encoding="utf-8")
    _pairs_tsv(items, measures, paths["pairs"])
    if plots:
        paths.update(_plots(result, items, measures, out))
    else:
        paths.update({p.stem: p for p in out.glob("*.png")})
    return paths


def log_wandb(result: dict, paths: dict[str, Path], wb: dict, out_dir: str) -> None:
    """One run in group ``wb['group']`` (``validity``): tables and the plots as images."""
    from paraamr.tracking import log_table, wandb_run

    with wandb_run(
        project=wb["project"],
        group=wb["group"],
        name="validity",
        config=result.get("config", {}),
        directory=str(out_dir),
        mode=wb.get("mode"),
    ) as run:
        if run is None:
            return
        import wandb

        cols = ["measure", "subset", "method", "value", "lo", "hi", "n_items", "n_sources"]
        log_table(run, "correlations", [*cols, "signature"], correlation_rows(result))
        log_table(
            run,
            "ceiling",
            [
                "subset",
                "method",
                "r_half",
                "r_full",
                "r_full_lo",
                "r_full_hi",
                "ceiling",
                "n_items",
            ],
            [
                [s, m, c["r_half"], c["r_full"], c["r_full_lo"], c["r_full_hi"], c["ceiling"]]
                + [c["n_items"]]
                for s, by in result["ceiling"].items()
                for m, c in by.items()
            ],
        )
        fl = result["fluency"]
        log_table(
            run,
            "fluency_auc",
            ["measure", "subset", "auc", "lo", "hi", "n_fluent", "n_not_fluent"],
            [
                [m, s, a["auc"], a["lo"], a["hi"], a["n_fluent"], a["n_not_fluent"]]
                for m, by in fl["auc"].items()
                for s, a in by.items()
            ],
        )
        if "keep_thresholds" in fl:
            log_table(
                run,
                "perplexity_thresholds",
                ["threshold", "chosen_as", "kept_fluent", "dropped_not_fluent", "dropped_all"],
                [
                    [t["threshold"], f"keep {t['keep']:.0%}", t["kept_fluent"]]
                    + [t["dropped_not_fluent"], t["dropped_all"]]
                    for t in fl["keep_thresholds"]
                ]
                + [
                    [t["threshold"], "paper (GPT-2 units)", t["kept_fluent"]]
                    + [t["dropped_not_fluent"], t["dropped_all"]]
                    for t in fl["paper_thresholds"]
                ],
            )
        log_table(
            run,
            "disagreements",
            ["measure", "side", "source", "paraphrase", "value", "human", "where"],
            [
                [m, side, e["source"], e["paraphrase"], e["value"], e["human"], e["where"]]
                for m, ex in result["disagreements"].items()
                for side, rows in ex.items()
                for e in rows
            ],
        )
        run.log({f"plots/{k}": wandb.Image(str(p)) for k, p in paths.items() if p.suffix == ".png"})
        summary = {
            f"spearman/{m}": by["all"]["spearman"]["value"] for m, by in result["meaning"].items()
        }
        summary["ceiling/spearman"] = result["ceiling"]["all"]["spearman"]["ceiling"]
        summary.update({f"auc/{m}": by["all"]["auc"] for m, by in fl["auc"].items()})
        run.summary.update(_json_safe(summary))
