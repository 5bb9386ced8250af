"""Table 2 of the ParaAMR paper: compare paraphrase corpora on the same sources.

Steps: read every corpus (streaming), keep the sources common to all (:mod:`paraamr.corpus.subset`),
optionally take this job's shard and the first ``limit`` sources, score each corpus
(:mod:`paraamr.scoring`) into ``OUT/shards/<name>/shard-<i>-of-<n>/``, then merge shards into rows.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import FORMATS, read_corpus
from paraamr.corpus.records import SourceRecord, same_sentence
from paraamr.corpus.subset import common_keys, filter_common, source_keys
from paraamr.errors import DataNotFoundError, ParaAMRError
from paraamr.metrics.aggregate import bootstrap_ci, corpus_means
from paraamr.metrics.lexical import CorpusBleu
from paraamr.scoring import METRICS, SOURCE_METRICS

__all__ = [
    "PAPER_TABLE2",
    "CorpusSpec",
    "parse_corpus_specs",
    "default_corpora",
    "resolve_data_dir",
    "common_subset",
    "shard_of",
    "merge_shards",
    "shard_dir",
]

log = logging.getLogger(__name__)

PAPER_TABLE2 = {
    "ParaNMT": {
        "similarity": 84.28,
        "one_minus_bleu": 70.71,
        "one_minus_iou": 45.78,
        "ted3": 3.28,
        "tedf": 13.94,
    },
    "ParaBank1": {
        "similarity": 81.77,
        "one_minus_bleu": 78.19,
        "one_minus_iou": 52.59,
        "ted3": 3.59,
        "tedf": 14.53,
    },
    "ParaBank2": {
        "similarity": 82.50,
        "one_minus_bleu": 88.82,
        "one_minus_iou": 59.61,
        "ted3": 4.04,
        "tedf": 17.41,
    },
    "ParaAMR": {
        "similarity": 82.05,
        "one_minus_bleu": 87.86,
        "one_minus_iou": 53.10,
        "ted3": 5.86,
        "tedf": 22.07,
    },
}

DATA_HINT = (
    "Point data_dir= (or PARAAMR_DATA) at a folder holding paraphrase/parabank-eval/ "
    "(ref.tsv, candidates.tsv), run `make data` to fetch the public evaluation sets, or score "
    'your own corpora with `make table2 CORPORA="name=FILE[:format] ..."`.'
)


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus to compare: display name, path and reader format (:data:`FORMATS`)."""

    name: str
    path: str
    fmt: str | None = None


def parse_corpus_specs(spec: str) -> list[CorpusSpec]:
    """Parse ``"name=FILE[:format] ..."``.

    >>> parse_corpus_specs("A=a.jsonl B=/x/b.tsv:paranmt")
    ... # doctest: +NORMALIZE_WHITESPACE
    [CorpusSpec(name='A', path='a.jsonl', fmt=None),
     CorpusSpec(name='B', path='/x/b.tsv', fmt='paranmt')]
    """
    out = []
    for item in spec.split():
        name, sep, rest = item.partition("=")
        if not sep or not name or not rest:
            raise ParaAMRError(f"corpus spec {item!r} is not name=FILE[:format]")
        path, fmt = rest, None
        head, colon, tail = rest.rpartition(":")
        if colon and tail in FORMATS:
            path, fmt = head, tail
        elif colon and head and "/" not in tail and "." not in tail:
            raise ParaAMRError(f"unknown format {tail!r} in {item!r}; known: {', '.join(FORMATS)}")
        out.append(CorpusSpec(name, path, fmt))
    if len({c.name for c in out}) != len(out):
        raise ParaAMRError("corpus names must be unique")
    return out


def resolve_data_dir(data_dir: str | os.PathLike | None, project_root: Path | None = None) -> Path:
    """``data_dir``, else ``$PARAAMR_DATA``, else ``<project>/../shared/data``, else
    ``<project>/data`` (where ``make data`` writes), the first that exists."""
    if data_dir:
        p = Path(data_dir).expanduser()
        if not p.is_dir():
            raise DataNotFoundError(f"data_dir {p} does not exist. {DATA_HINT}")
        return p
    if os.environ.get("PARAAMR_DATA"):
        return resolve_data_dir(os.environ["PARAAMR_DATA"])
    root = project_root or Path(__file__).resolve().parents[1]
    candidates = [root.parent / "shared" / "data", root / "data"]
    for p in candidates:
        if p.is_dir():
            return p
    raise DataNotFoundError(
        f"no data found (looked for {', '.join(map(str, candidates))}). {DATA_HINT}"
    )


def default_corpora(data_dir: Path) -> list[CorpusSpec]:
    """ParaNMT vs ParaBank-1 on the 400 ParaBank-Eval sources (the offline Table 2 sample)."""
    d = data_dir / "paraphrase" / "parabank-eval"
    if not (d / "candidates.tsv").is_file():
        raise DataNotFoundError(f"{d}/candidates.tsv not found. {DATA_HINT}")
    return [
        CorpusSpec("ParaNMT", str(d), "parabank-eval-paranmt"),
        CorpusSpec("ParaBank1", str(d), "parabank-eval-parabank1"),
    ]


def _usable(records: Iterable[SourceRecord]) -> Iterator[SourceRecord]:
    """Records with at least one paraphrase that differs from the source (case-insensitive)."""
    for r in records:
        if any(not same_sentence(r.text, p.text) for p in r.paraphrases):
            yield r


def common_subset(specs: list[CorpusSpec], on_error: str = "raise", progress: bool = True):
    """Sorted keys of the sources present (with a usable paraphrase) in every corpus."""
    from tqdm.auto import tqdm

    sets = []
    for spec in specs:
        records = read_corpus(spec.path, spec.fmt, SkipLog(on_error))
        bar = tqdm(records, desc=f"sources {spec.name}", unit="src", disable=not progress)
        keys = source_keys(_usable(bar))
        log.info("%s: %d distinct sources", spec.name, len(keys))
        sets.append(keys)
    common = common_keys(sets)
    log.info("common subset: %d sources", len(common))
    return common


def shard_of(records: Iterable[SourceRecord], shard: int, num_shards: int):
    """Deterministic sharding by position in the (subset) stream: record k goes to k % n.

    Sets ``record.index`` to the global position so source ids stay unique across shards.
    """
    if not 0 <= shard < num_shards:
        raise ParaAMRError(f"shard must be in [0, {num_shards}), got {shard}")
    for k, r in enumerate(records):
        if k % num_shards == shard:
            r.index = k
            yield r


def shard_dir(out_dir: str | os.PathLike, name: str, shard: int, num_shards: int) -> Path:
    return Path(out_dir) / "shards" / name / f"shard-{shard}-of-{num_shards}"


def limited(records: Iterable[SourceRecord], limit: int | None):
    return records if not limit else itertools.islice(records, limit)


def subset_stream(spec: CorpusSpec, keys, skips: SkipLog, limit: int | None = None):
    """The records of one corpus restricted to the common subset (first ``limit``)."""
    return limited(filter_common(_usable(read_corpus(spec.path, spec.fmt, skips)), keys), limit)


def merge_shards(out_dir: str | os.PathLike, name: str, bootstrap: int = 0, seed: int = 0) -> dict:
    """Join the shards of one corpus into a Table 2 row (percentages like the paper)."""
    root = Path(out_dir) / "shards" / name
    dirs = sorted(root.glob("shard-*-of-*"))
    if not dirs:
        raise DataNotFoundError(f"no shards under {root}: run the scoring step first")
    n_expected = {int(d.name.rsplit("-", 1)[1]) for d in dirs}
    if len(n_expected) != 1:
        raise ParaAMRError(f"{root} mixes shard counts {sorted(n_expected)}: remove stale shards")
    n = n_expected.pop()
    missing = [i for i in range(n) if not (root / f"shard-{i}-of-{n}" / "summary.json").is_file()]
    if missing:
        raise ParaAMRError(f"{root}: shards {missing} of {n} are missing or unfinished")
    rows, n_pairs, dropped, skips, sig = [], 0, 0, {}, set()
    cbleu = CorpusBleu()
    for i in range(n):
        d = root / f"shard-{i}-of-{n}"
        summary = json.loads((d / "summary.json").read_text())
        n_pairs += summary["n_pairs"]
        dropped += summary["dropped_identical"]
        for k, v in summary["skips"]["by_reason"].items():
            skips[k] = skips.get(k, 0) + v
        cbleu.merge(summary["corpus_bleu_stats"])
        sig.add(summary["signature"])
        with open(d / "sources.jsonl", encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh)
    if len(sig) > 1:
        raise ParaAMRError(f"{root}: shards were scored with different settings: {sorted(sig)}")
    means = corpus_means(rows, METRICS + SOURCE_METRICS)
    row = {"dataset": name, "n_sources": len(rows), "n_pairs": n_pairs}
    for m in METRICS + SOURCE_METRICS:
        v = means[m]
        if m in SOURCE_METRICS and v is None:
            continue  # optional metric that was not computed
        if m == "one_minus_bleu" and v is None and cbleu.stats[0]:
            v = 1.0 - cbleu.score()  # corpus-level BLEU variant
        scale = (
            100.0 if m in ("similarity", "one_minus_bleu", "one_minus_iou", "self_bleu") else 1.0
        )
        row[m] = None if v is None else round(v * scale, 4)
        if bootstrap and means[m] is not None:
            lo, hi = bootstrap_ci([r.get(m) for r in rows], bootstrap, seed=seed)
            row[f"{m}_ci95"] = [round(lo * scale, 4), round(hi * scale, 4)]
    row["dropped_identical"] = dropped
    row["skipped"] = skips
    row["signature"] = sig.pop() if sig else ""
    return row
