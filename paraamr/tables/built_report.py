"""The offline ParaAMR analogue in numbers: Table 1, rejects, the perplexity filter's effect and
the checks of the paper's claim, from the folders ``make corpus-offline`` writes
(``python analysis/report_built.py --built results/built``; a build not yet merged is read from
its finished shards).

Per source set (``BUILT/<set>/{all,top}``: re-focused, original top only) it prints Table 1, how
many sources got a paraphrase, the rejects by stage and what a perplexity threshold keeps; with
the set's Table 2 (``BUILT/table2-<set>/table2.json``, else ``BUILT/table2-<set>-*/``) the
checks: TED-3 of the re-focused rows against ParaNMT's (ratio) and the round trip's
(difference), and their similarity to the source; with the run's ``paired-refocus.json``
(``paraamr paired … --json``, as ``make corpus-offline`` writes it after the table; an older one
is left out) also the paired 95% intervals of the two differences to the round trip.

Several runs (one ``BUILT`` folder per seed or setting: ``--built A --built B``) are set side by
side by :func:`checks_across`: each check and share of sources with a paraphrase per run, with
their mean, lowest and highest.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from paraamr.builder.stats import table1_stats
from paraamr.corpus.filters import passes_perplexity
from paraamr.corpus.readers import read_corpus
from paraamr.errors import InputError
from paraamr.metrics.aggregate import mean_std
from paraamr.utils import json_lines

__all__ = ["build_report", "claim_checks", "checks_across", "render", "report_built", "POLICIES"]

POLICIES = {"all": "re-focused", "top": "original top only"}


def _finished_shards(folder: Path) -> list[dict]:
    """The progress records of ``folder``'s finished shards (an unmerged build)."""
    out = []
    for p in sorted(folder.glob("shard-*-of-*.progress.json")):
        state = json.loads(p.read_text(encoding="utf-8"))
        if state.get("done"):
            out.append({**state, "stem": p.name.removesuffix(".progress.json")})
    return out


def _summary(folder: Path) -> tuple[dict, list[Path], list[Path], str]:
    """Counts (and, merged, Table 1), the records and rejects files of a merged build (its
    ``build_summary.json``) or of its finished shards ("shard k of n")."""
    merged = folder / "build_summary.json"
    if merged.is_file():
        summary = json.loads(merged.read_text(encoding="utf-8"))
        return summary, [folder / "corpus.jsonl"], [folder / "corpus.rejects.jsonl"], "merged"
    shards = _finished_shards(folder)
    if not shards:
        raise InputError(f"{folder}: no build_summary.json and no finished shard")
    records = [folder / f"{s['stem']}.records.jsonl" for s in shards]
    counts: Counter = Counter()
    for s in shards:
        counts.update(s["counts"])
    which = ", ".join(str(s["shard"]) for s in shards)
    return ({"counts": dict(counts)},
            records, [folder / f"{s['stem']}.rejects.jsonl" for s in shards],
            f"shard {which} of {shards[0]['num_shards']}")  # fmt: skip


def build_report(folder: Path, max_ppl: float) -> dict:
    """Table 1, counts, rejects by stage and the perplexity filter of one build folder
    (merged, or the finished shards of an unmerged build: ``built_from`` says which)."""
    summary, records, rejects, built_from = _summary(folder)
    stages = Counter(row["stage"] for path in rejects for _, row in json_lines(path))
    rows = [r for path in records for r in read_corpus(path, "paraamr")]  # read once
    kept = Counter()
    for r in rows:
        ok = [p for p in r.paraphrases if passes_perplexity(p.perplexity, max_ppl)]
        kept.update(paraphrases=len(ok), sources=bool(ok))
    c = summary["counts"]
    return {
        "built_from": built_from,
        "table1": summary.get("table1") or table1_stats(r.to_json() for r in rows),
        "items": c["items"],
        "with_paraphrase": c["records"],
        "with_paraphrase_share": round(c["records"] / c["items"], 4) if c["items"] else 0.0,
        "paraphrases": c["paraphrases"],
        "rejects": dict(stages),
        "ppl_filter": {"max_ppl": max_ppl, **kept},
    }


def claim_checks(table2: dict, refocused: str, round_trip: str, baseline: str) -> dict:
    """TED-3 ratio to ``baseline`` and difference to ``round_trip``, and the similarity."""
    rows = {r["dataset"]: r for r in table2["rows"]}
    a, t, b = rows[refocused], rows[round_trip], rows[baseline]
    return {
        "ted3_ratio_to_" + baseline: round(a["ted3"] / b["ted3"], 2),
        "ted3_minus_round_trip": round(a["ted3"] - t["ted3"], 2),
        "similarity": a["similarity"],
        "similarity_round_trip": t["similarity"],
    }


def render(name: str, reports: dict[str, dict]) -> str:
    """One source set's builds as a markdown table (a row per build)."""
    lines = [f"### {name}", "", "| build | sources | with a paraphrase | paraphrases / source "
             "| source words | paraphrase words | rejects | kept at ppl <= {:g} |".format(
                 next(iter(reports.values()))["ppl_filter"]["max_ppl"]),
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for policy, r in reports.items():
        t1, f = r["table1"], r["ppl_filter"]
        shown = POLICIES[policy] + ("" if r["built_from"] == "merged" else f" ({r['built_from']})")
        rej = ", ".join(f"{k} {v}" for k, v in sorted(r["rejects"].items())) or "none"
        lines.append(
            f"| {shown} | {r['items']} | {r['with_paraphrase']} "
            f"({100 * r['with_paraphrase_share']:.1f}%) | {t1['avg_paraphrases']:.2f} "
            f"| {t1['avg_source_length']:.2f} | {t1['avg_paraphrase_length']:.2f} | {rej} "
            f"| {f.get('paraphrases', 0)} of {r['paraphrases']} ({f.get('sources', 0)} sources) |"
        )
    return "\n".join(lines) + "\n"


def _is_build(folder: Path) -> bool:
    return (folder / "build_summary.json").is_file() or bool(_finished_shards(folder))


def _table2_of(built: Path, name: str) -> Path | None:
    """``BUILT/table2-<set>/table2.json`` (``make corpus-offline``'s), else the first
    ``table2-<set>-<what>/table2.json`` in name order (a Table 2 of part of a build)."""
    stem = "table2-" + name.replace("_", "-")
    for folder in [built / stem, *sorted(built.glob(stem + "-*"))]:
        if (folder / "table2.json").is_file():
            return folder / "table2.json"
    return None


def report_built(built: Path, max_ppl: float = 120.0) -> tuple[dict, str]:
    """Every set's numbers (and markdown) under ``built``; a folder without builds is an
    :class:`~paraamr.errors.InputError`."""
    out: dict = {}
    text: list[str] = []
    sets = sorted(p.name for p in built.iterdir() if _is_build(p / "all"))
    if not sets:
        raise InputError(f"{built}: no build folder (<set>/all/build_summary.json or a finished "
                         "shard) in it")  # fmt: skip
    for s in sets:
        reports = {p: build_report(built / s / p, max_ppl) for p in POLICIES
                   if _is_build(built / s / p)}  # fmt: skip
        out[s] = {"builds": reports}
        text.append(render(s, reports))
        t2 = _table2_of(built, s)
        if t2 is not None and len(reports) == 2:
            out[s]["table2"] = str(t2)
            checks = claim_checks(json.loads(t2.read_text(encoding="utf-8")), "ParaAMR-built",
                                  "ParaAMR-built-no-refocus", "ParaNMT")  # fmt: skip
            paired = t2.parent / "paired-refocus.json"  # older than the table: from another run
            if paired.is_file() and paired.stat().st_mtime_ns >= t2.stat().st_mtime_ns:
                diffs = json.loads(paired.read_text(encoding="utf-8"))["metrics"]
                checks["ted3_minus_round_trip_ci95"] = diffs["ted3"]["ci95"]
                checks["similarity_minus_round_trip_ci95"] = diffs["similarity"]["ci95"]
            out[s]["checks"] = checks
            text.append("checks: " + ", ".join(f"{k} {v}" for k, v in checks.items()) + "\n")
    return out, "\n".join(text)


#: what :func:`checks_across` sets side by side: the checks' numbers and one of the builds'
ACROSS = ("ted3_ratio_to_ParaNMT", "ted3_minus_round_trip", "similarity", "with_paraphrase_share")


def checks_across(runs: dict[str, dict]) -> tuple[dict, str]:
    """Several runs' :func:`report_built` results (label -> result) side by side, per source
    set: each of :data:`ACROSS` per run (``with_paraphrase_share``: the re-focused build's),
    then its mean, lowest and highest over the runs that have it; a run without a set's Table 2
    shows ``–`` for its checks.

    >>> one = {"s": {"builds": {"all": {"with_paraphrase_share": 1.0}},
    ...              "checks": {"ted3_ratio_to_ParaNMT": 1.3, "ted3_minus_round_trip": 0.7,
    ...                         "similarity": 55.8}}}
    >>> two = {"s": {"builds": {"all": {"with_paraphrase_share": 0.9}},
    ...              "checks": {"ted3_ratio_to_ParaNMT": 1.2, "ted3_minus_round_trip": 0.4,
    ...                         "similarity": 54.0}}}
    >>> out, _ = checks_across({"seed0": one, "seed1": two})
    >>> out["s"]["ted3_minus_round_trip"]
    {'seed0': 0.7, 'seed1': 0.4, 'mean': 0.55, 'min': 0.4, 'max': 0.7}
    """
    labels = list(runs)
    sets = sorted({s for r in runs.values() for s in r})
    out: dict = {}
    lines = ["| source set | check | " + " | ".join(labels) + " | mean | lowest | highest |",
             "|---|---|" + "---|" * (len(labels) + 3)]  # fmt: skip
    for s in sets:
        out[s] = {}
        for key in ACROSS:
            row: dict = {}
            for label, result in runs.items():
                part = result.get(s, {})
                where = part.get("builds", {}).get("all", {}) if key == "with_paraphrase_share" \
                    else part.get("checks", {})  # fmt: skip
                value = where.get(key)
                if value is not None:
                    row[label] = value
            if not row:
                continue
            got = list(row.values())
            row.update(mean=mean_std(got)[0], min=min(got), max=max(got))
            out[s][key] = row
            cells = [_cell(row.get(x)) for x in [*labels, "mean", "min", "max"]]
            lines.append(f"| {s} | {key} | " + " | ".join(cells) + " |")
    return out, "\n".join(lines) + "\n"


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"
