"""Template statistics of a training set and the frequency buckets of evaluation sets.

``python -m paraamr.top stats --train TRAIN [--test TEST ...] [--out DIR]`` (``make
top-stats``) prints them, writes ``DIR/template_stats.json`` and the log-log rank/frequency
plot ``DIR/template_rank_frequency.png``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import require_records
from paraamr.top.readers import read_examples
from paraamr.top.templates import (
    BUCKETS,
    bucket_counts,
    plot_rank_frequency,
    template_counts,
    template_stats,
)
from paraamr.utils import write_json_atomic

__all__ = ["file_digest", "stats_report", "format_report", "run_stats"]


def file_digest(path: str | os.PathLike) -> str:
    """First 12 hex digits of the file's SHA-1 (names the exact data a number came from)."""
    h = hashlib.sha1()  # noqa: S324 (identification, not security)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def stats_report(
    train: str | os.PathLike,
    tests: Sequence[str | os.PathLike] = (),
    *,
    fmt: str | None = None,
    on_error: str = "raise",
    hint: str = SkipLog.hint,
    allow_empty: bool = False,
    top_k: int = 10,
) -> tuple[dict[str, object], dict[str, int]]:
    """Template statistics of ``train`` and the bucket shares of each file in ``tests``.

    ``hint`` ends a bad-line error (:class:`~paraamr.corpus.errors.SkipLog`: the Hydra key by
    default, ``CLI_HINT`` in the command); a file without trees is an error naming it.

    Returns:
        ``(report, train template counts)``; the report is JSON-ready and carries a
        ``signature`` naming the files (with digests) and the definitions used.
    """

    def trees(path: str | os.PathLike, skips: SkipLog) -> list:
        examples = read_examples(path, fmt, skips=skips, allow_empty=allow_empty)
        return [e.tree for e in require_records(examples, path, "trees", skips)]

    skips = SkipLog(on_error, hint=hint)
    train_trees = trees(train, skips)
    counts = template_counts(train_trees)
    st = template_stats(counts, top_k=top_k)
    report: dict[str, object] = {
        "train": {"path": str(train), "sha1": file_digest(train), **st.as_dict()},
        "tests": [],
    }
    for t in tests:
        test_skips = SkipLog(on_error, hint=hint)
        test_trees = trees(t, test_skips)
        b = bucket_counts(test_trees, counts)
        n = len(test_trees)
        report["tests"].append(
            {
                "path": str(t),
                "sha1": file_digest(t),
                "n": n,
                "buckets": b,
                "shares": {k: (b[k] / n if n else None) for k in BUCKETS},
                "skipped": test_skips.summary(),
            }
        )
    report["skipped_train"] = skips.summary()
    report["signature"] = (
        f"paraamr-top-stats|train:{Path(train).name}@{report['train']['sha1']}"
        "|template:maximal-terminal-runs->[mask]"
        "|buckets:train-template-count,f>=5,1<=f<5,f=0"
    )
    return report, counts


def format_report(report: dict[str, object]) -> str:
    """Plain-text rendering of :func:`stats_report`'s report."""
    tr = report["train"]
    lines = [
        f"train: {tr['path']} (sha1 {tr['sha1']}), {tr['n_examples']:,} trees",
        f"unique templates: {tr['n_templates']:,}",
        f"top-10 templates cover {100 * tr['top10_share']:.2f}% of the trees; "
        f"{tr['singleton_templates']:,} templates occur once "
        f"({100 * tr['singleton_example_share']:.2f}% of the trees)",
        "log-log rank/frequency slope: "
        + (
            f"{tr['powerlaw_slope']:.3f}"
            if tr["powerlaw_slope"] is not None
            else "n/a (fewer than 2 distinct frequencies)"
        ),
        "",
        f"top-{len(tr['top'])} templates:",
    ]
    for i, row in enumerate(tr["top"], 1):
        share = 100 * row["count"] / tr["n_examples"]
        lines.append(f"{i:>3}. {row['count']:>6,} ({share:5.2f}%)  {row['template']}")
    for t in report["tests"]:
        lines += ["", f"test: {t['path']} (sha1 {t['sha1']}), {t['n']:,} trees"]
        for k in BUCKETS:
            share = t["shares"][k]
            pct = f"{100 * share:6.2f}%" if share is not None else "   n/a"
            lines.append(f"  {k:<5} {t['buckets'][k]:>6,}  {pct}")
    skipped = report["skipped_train"]["total"] + sum(t["skipped"]["total"] for t in report["tests"])
    if skipped:
        lines += ["", f"skipped bad lines: {skipped} (see template_stats.json)"]
    lines += ["", f"signature: {report['signature']}"]
    return "\n".join(lines)


def run_stats(
    train: str | os.PathLike,
    tests: Sequence[str | os.PathLike] = (),
    out_dir: str | os.PathLike | None = "results/top",
    **kw,
) -> dict[str, object]:
    """:func:`stats_report`, printed, and written (JSON and plot) under ``out_dir``."""
    report, counts = stats_report(train, tests, **kw)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        plot = plot_rank_frequency(counts, out / "template_rank_frequency")
        report["plot"] = str(plot[0])
        write_json_atomic(out / "template_stats.json", report, sort_keys=False)
    print(format_report(report))
    if out_dir is not None:
        print(f"wrote {Path(out_dir) / 'template_stats.json'} and {report['plot']}")
    return report
