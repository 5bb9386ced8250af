"""Human judgement files: ParaBank-Eval's own layout and a generic TSV layout.

Both give one :class:`Item` per distinct (source, paraphrase) pair with all of its judgements.

**ParaBank-Eval** (a directory with ``ref.tsv`` and ``candidates.tsv``, tab-separated with a
header, fields CSV-quoted where they contain quotes): ``candidates.tsv`` has one judgement per row,
``worker_id_anon ref_id ref_len sys_id candidate NLL human_score gm``. ``human_score`` is the
meaning score 0-100; ``gm`` the fluency (0 nonsensical, 1 meaningful but ungrammatical,
2 meaningful and grammatical). A judge who marks a candidate nonsensical (``gm`` 0) gives no
meaning score: such a row has an empty ``human_score`` and counts for fluency only. ``sys_id`` 0
rows copy the source; ``NLL`` is the generating NMT model's negative log-likelihood (the file's
own reference measure). Source length is the ``ref_len`` bucket (5, 10, 20 or 40 words).

**Generic** (any other human judgement file, one judgement per line, UTF-8, tab-separated)::

    source<TAB>paraphrase<TAB>judge_score[<TAB>fluency]

``judge_score`` is a number, larger meaning closer in meaning (any scale); it may be empty only
when ``fluency`` is given (a judgement of fluency alone). ``fluency`` is 0, 1 or 2 as in
ParaBank-Eval (2 = fluent). An optional first line starting with ``source<TAB>paraphrase`` is a
header; blank lines are ignored. Lines with the same (source, paraphrase) are judgements of one
item. The length bucket is the ParaBank-Eval bucket nearest to the source's word count on a log
scale (:func:`length_bucket`).

Bad rows raise :class:`~paraamr.errors.CorpusFormatError` naming file and line, or with
``on_error="skip"`` are counted by reason (:class:`~paraamr.corpus.errors.SkipLog`).

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "j.tsv")
>>> _ = open(p, "w").write("A cat.\\tOne cat.\\t80\\t2\\nA cat.\\tOne cat.\\t60\\t1\\n")
>>> js = read_judgements(p)
>>> [(i.paraphrase, i.meaning, i.fluency_class) for i in js.items]
[('One cat.', 70.0, 1)]
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import iter_lines, parabank_eval_files, read_quoted_tsv
from paraamr.corpus.records import same_sentence
from paraamr.errors import DataNotFoundError

__all__ = [
    "BUCKETS",
    "LAYOUTS",
    "Judgement",
    "Item",
    "JudgementSet",
    "length_bucket",
    "unquote",
    "read_parabank_eval",
    "read_generic",
    "read_judgements",
]

BUCKETS = (5, 10, 20, 40)
LAYOUTS = ("auto", "parabank-eval", "generic")
COPY_SYS_ID = "0"
CANDIDATE_COLUMNS = (
    "worker_id_anon",
    "ref_id",
    "ref_len",
    "sys_id",
    "candidate",
    "NLL",
    "human_score",
    "gm",
)
REF_COLUMNS = ("ref_id", "ref_sent", "ref_len")
FLUENCY_LEVELS = (0, 1, 2)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def length_bucket(n_words: int) -> int:
    """The ParaBank-Eval length bucket (5/10/20/40 words) nearest to ``n_words`` on a log scale.

    >>> [length_bucket(n) for n in (1, 7, 8, 14, 15, 28, 29, 120)]
    [5, 5, 10, 10, 20, 20, 40, 40]
    """
    if n_words < 1:
        raise ValueError("a source has at least one word")
    return min(BUCKETS, key=lambda b: abs(math.log(n_words) - math.log(b)))


def unquote(field_text: str) -> str:
    """Undo CSV quoting of one tab-separated field (``"a ""b"" c"`` -> ``a "b" c``); other
    fields are returned unchanged.

    >>> unquote('"a ""b"" c"'), unquote('plain "text"')
    ('a "b" c', 'plain "text"')
    """
    m = _QUOTED.fullmatch(field_text)
    return m.group(1).replace('""', '"') if m else field_text


@dataclass(frozen=True)
class Judgement:
    """One judge's verdict on one paraphrase."""

    meaning: float | None
    fluency: int | None
    judge: str | None
    line: int


@dataclass
class Item:
    """A distinct (source, paraphrase) pair with all of its judgements.

    ``meaning`` is the mean of the judges' meaning scores; ``fluency_class`` the lower median of
    their fluency levels (2 exactly when a strict majority said 2, so ``fluent`` is a majority
    verdict).
    """

    source_id: str
    source: str
    paraphrase: str
    bucket: int
    path: str
    line: int
    systems: set[str] = field(default_factory=set)
    nll_by_group: dict[str, float] = field(default_factory=dict)
    judgements: list[Judgement] = field(default_factory=list)

    @property
    def is_copy(self) -> bool:
        """The paraphrase repeats its source (``sys_id`` 0, or equal up to case and spaces)."""
        return COPY_SYS_ID in self.systems or same_sentence(self.source, self.paraphrase)

    @property
    def meanings(self) -> list[float]:
        return [j.meaning for j in self.judgements if j.meaning is not None]

    @property
    def meaning(self) -> float | None:
        m = self.meanings
        return math.fsum(m) / len(m) if m else None

    @property
    def fluencies(self) -> list[int]:
        return [j.fluency for j in self.judgements if j.fluency is not None]

    @property
    def fluency_class(self) -> int | None:
        f = self.fluencies
        return statistics.median_low(f) if f else None

    @property
    def fluent(self) -> bool | None:
        c = self.fluency_class
        return None if c is None else c == 2

    @property
    def nll(self) -> float | None:
        """The file's own NLL: the mean over the system groups that produced this pair (their
        values may differ); ``None`` when the file has none."""
        v = list(self.nll_by_group.values())
        return math.fsum(v) / len(v) if v else None


@dataclass
class JudgementSet:
    """The items of one judgement file, with what was read, skipped and why."""

    items: list[Item]
    path: str
    layout: str
    skips: SkipLog
    counts: Counter = field(default_factory=Counter)

    @property
    def n_sources(self) -> int:
        return len({i.source_id for i in self.items})

    def describe(self) -> str:
        """Data part of a signature: layout, file, judgement and item counts."""
        c = self.counts
        return (
            f"{self.layout}({Path(self.path).name},{c['judgements']}j,{len(self.items)}items,"
            f"{self.n_sources}src,skipped={self.skips.total})"
        )

    def summary(self) -> dict:
        copies = sum(i.is_copy for i in self.items)
        return {
            "path": self.path,
            "layout": self.layout,
            "judgements": self.counts["judgements"],
            "judgements_without_meaning": self.counts["no_meaning"],
            "items": len(self.items),
            "sources": self.n_sources,
            "copies": copies,
            "copies_by_system_0": sum(COPY_SYS_ID in i.systems for i in self.items),
            "copies_by_text_only": sum(
                i.is_copy and COPY_SYS_ID not in i.systems for i in self.items
            ),
            "judges_per_item_mean": (
                self.counts["judgements"] / len(self.items) if self.items else 0.0
            ),
            "skips": self.skips.summary(),
        }


def _number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} {text!r} is not finite")
    return v


def _fluency(text: str) -> int:
    if text not in {str(x) for x in FLUENCY_LEVELS}:
        raise ValueError(f"fluency {text!r} is not one of 0, 1, 2")
    return int(text)


def _add(
    items: dict[tuple[str, str], Item],
    key: tuple[str, str],
    make,
    judgement: Judgement,
    group: str | None = None,
    nll: float | None = None,
) -> None:
    """Append a judgement to its item (created on first sight); ``group`` is the ``sys_id``
    field (space-separated ids of the systems that produced the paraphrase)."""
    item = items.get(key)
    if item is None:
        item = items[key] = make()
    item.judgements.append(judgement)
    if group is not None:
        item.systems.update(group.split())
        if nll is not None:
            item.nll_by_group.setdefault(" ".join(sorted(group.split(), key=int_or_str)), nll)


def read_parabank_eval(path: str | os.PathLike, on_error: str = "raise") -> JudgementSet:
    """Read a ParaBank-Eval directory (``ref.tsv`` + ``candidates.tsv``).

    ``NLL`` is kept once per (pair, ``sys_id`` group): the same candidate produced by different
    system groups may carry different NLL values, and the item's ``nll`` is their mean.
    """
    ref_path, cand_path = parabank_eval_files(path)
    skips, counts = SkipLog(on_error), Counter()
    refs: dict[str, tuple[str, int, int]] = {}
    for n, row in read_quoted_tsv(ref_path, skips, REF_COLUMNS):
        try:
            bucket = int(row["ref_len"])
        except ValueError:
            skips.skip(f"ref_len {row['ref_len']!r} is not an integer", str(ref_path), n)
            continue
        if not row["ref_sent"].strip():
            skips.skip("empty reference sentence", str(ref_path), n)
            continue
        if row["ref_id"] in refs:
            skips.skip(f"duplicate ref_id {row['ref_id']!r}", str(ref_path), n)
            continue
        refs[row["ref_id"]] = (row["ref_sent"].strip(), bucket, n)

    items: dict[tuple[str, str], Item] = {}
    for n, row in read_quoted_tsv(cand_path, skips, CANDIDATE_COLUMNS):
        ref = refs.get(row["ref_id"])
        text = row["candidate"].strip()
        try:
            if ref is None:
                raise ValueError(f"unknown ref_id {row['ref_id']!r} (not in ref.tsv)")
            if not text:
                raise ValueError("empty candidate")
            if not row["sys_id"].split():
                raise ValueError("empty sys_id")
            fluency = _fluency(row["gm"].strip())
            score = row["human_score"].strip()
            if not score and fluency != 0:
                raise ValueError("empty human_score with gm != 0")
            meaning = _number(score, "human_score") if score else None
            if meaning is not None and not 0 <= meaning <= 100:
                raise ValueError(f"human_score {meaning} outside 0-100")
            nll = _number(row["NLL"], "NLL")
        except ValueError as e:
            skips.skip(str(e), str(cand_path), n)
            continue
        counts["judgements"] += 1
        counts["no_meaning"] += meaning is None
        src, bucket, _ = ref
        key = (row["ref_id"], text)
        _add(
            items,
            key,
            lambda src=src, bucket=bucket, n=n, ref_id=row["ref_id"], text=text: Item(
                ref_id, src, text, bucket, str(cand_path), n
            ),
            Judgement(meaning, fluency, row["worker_id_anon"], n),
            row["sys_id"],
            nll,
        )
    return JudgementSet(list(items.values()), str(Path(path)), "parabank-eval", skips, counts)


def int_or_str(s: str):
    """Sort key: numbers numerically, then anything else.

    >>> sorted(["10", "2", "x"], key=int_or_str)
    ['2', '10', 'x']
    """
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def read_generic(path: str | os.PathLike, on_error: str = "raise") -> JudgementSet:
    """Read a ``source<TAB>paraphrase<TAB>judge_score[<TAB>fluency]`` file."""
    path = str(path)
    if not os.path.isfile(path):
        raise DataNotFoundError(f"judgement file {path} does not exist")
    skips, counts = SkipLog(on_error), Counter()
    items: dict[tuple[str, str], Item] = {}
    for n, line in iter_lines(path, skips):
        if not line.strip():
            continue
        f = [unquote(x) for x in line.split("\t")]
        if n == 1 and f[:2] == ["source", "paraphrase"]:
            continue
        if len(f) not in (3, 4):
            skips.skip(
                f"expected 3 or 4 tab-separated columns (source, paraphrase, judge_score"
                f"[, fluency]), got {len(f)}",
                path,
                n,
            )
            continue
        src, para = f[0].strip(), f[1].strip()
        try:
            if not src or not para:
                raise ValueError("empty source or paraphrase")
            fluency = _fluency(f[3].strip()) if len(f) == 4 else None
            score = f[2].strip()
            if not score and fluency is None:
                raise ValueError("empty judge_score without a fluency column")
            meaning = _number(score, "judge_score") if score else None
        except ValueError as e:
            skips.skip(str(e), path, n)
            continue
        counts["judgements"] += 1
        counts["no_meaning"] += meaning is None
        _add(
            items,
            (src, para),
            lambda src=src, para=para, n=n: Item(
                src, src, para, length_bucket(len(src.split())), path, n
            ),
            Judgement(meaning, fluency, None, n),
        )
    return JudgementSet(list(items.values()), path, "generic", skips, counts)


def read_judgements(
    path: str | os.PathLike, layout: str = "auto", on_error: str = "raise"
) -> JudgementSet:
    """Read a judgement file: ``auto`` takes a directory holding ``candidates.tsv`` as
    ParaBank-Eval and a file as the generic layout."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if layout == "auto":
        layout = "parabank-eval" if Path(path, "candidates.tsv").is_file() else "generic"
    if layout == "parabank-eval":
        return read_parabank_eval(path, on_error)
    return read_generic(path, on_error)
