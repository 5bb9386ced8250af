"""Readers of the STS evaluation sets in the layouts SentEval / SimCSE use.

=====================  =====================================================  ======================
set (``StsSet.name``)  file(s) read                                           layout
=====================  =====================================================  ======================
STS12 ... STS16        ``sts/senteval-layout/STS1X-en-test/STS.input.T.txt``  ``senteval``
                       + ``STS.gs.T.txt`` (lowercased, tokenized; STS12 has
                       MSRvid)
STS12 ... STS16        ``sts/semeval-sts-original/20XX/T.test.tsv``           ``original``
                       (``score<TAB>s1<TAB>s2``; original casing; no
                       STS12-MSRvid)
STSBenchmark-dev       ``glue/k-shot/STS-B/16-42/test.tsv`` (= full GLUE       ``glue-stsb``
                       STS-B dev, 1,500 pairs)
SICKRelatedness        ``sts/sick2014/SICK_test_annotated.txt`` (4,927)        ``sickr``
any of the above       Hugging Face hub ``mteb/sts12-sts`` ... (online only)  ``hub``
=====================  =====================================================  ======================

Pairs with a blank gold score (STS15/16 ship unscored pairs) are skipped and counted in
``StsSet.skipped``, as SentEval does. Sentences are whitespace-normalised the way SentEval's STS
loader + SimCSE's batcher do it (``" ".join(s.split())``); casing and tokens are left alone.

Malformed input raises :class:`~paraamr.errors.CorpusFormatError` (file and line) and never
shifts an alignment silently: input and gold files of different lengths are an error.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paraamr.errors import ConfigError, CorpusFormatError, DataNotFoundError

__all__ = [
    "StsSet",
    "STS_YEARS",
    "STSB_DEV",
    "SICKR",
    "DEFAULT_INCLUDE",
    "HUB_NAMES",
    "read_senteval_year",
    "read_original_year",
    "read_sickr",
    "read_stsb",
    "load_sts_suite",
    "load_hub",
]

log = logging.getLogger(__name__)

STS_YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")
STSB_DEV = "STSBenchmark-dev"
SICKR = "SICKRelatedness"
DEFAULT_INCLUDE = (*STS_YEARS, "STSBenchmark", SICKR)

#: paths relative to the shared data root (``paraamr.datadir.resolve_data_dir``)
SENTEVAL_DIR = "sts/senteval-layout/{name}-en-test"
ORIGINAL_DIR = "sts/semeval-sts-original/20{yy}"
SICKR_FILE = "sts/sick2014/SICK_test_annotated.txt"
STSB_FILE = "glue/k-shot/STS-B/16-42/test.tsv"  # the full GLUE STS-B dev set

#: set name -> (hub data set, split); online use only
HUB_NAMES = {
    **{y: (f"mteb/{y.lower()}-sts", "test") for y in STS_YEARS},
    "STSBenchmark": ("mteb/stsbenchmark-sts", "test"),
    STSB_DEV: ("mteb/stsbenchmark-sts", "validation"),
    SICKR: ("mteb/sickr-sts", "test"),
}

Subset = tuple[list[str], list[str], np.ndarray]


@dataclass
class StsSet:
    """One STS evaluation set: a year of SemEval STS, STS-B or SICK-R.

    Attributes:
        name: ``"STS12"`` ... ``"STS16"``, ``"STSBenchmark-dev"``, ``"SICKRelatedness"``.
        subsets: task name -> (sentences1, sentences2, gold scores), scored pairs only.
        source: the folder / file / hub name read.
        skipped: pairs without a gold score (left out).
        layout: ``senteval``, ``original``, ``glue-stsb``, ``stsbenchmark``, ``sickr`` or ``hub``.

    >>> s = StsSet("X", {"a": (["x", "y"], ["x", "z"], np.array([5.0, 1.0]))}, "mem")
    >>> s.n, s.tasks
    (2, ['a'])
    """

    name: str
    subsets: dict[str, Subset]
    source: str
    skipped: int = 0
    layout: str = ""

    @property
    def n(self) -> int:
        """Scored pairs over all subsets."""
        return sum(len(g) for _, _, g in self.subsets.values())

    @property
    def tasks(self) -> list[str]:
        return list(self.subsets)

    def sentences(self) -> Iterable[str]:
        for s1, s2, _ in self.subsets.values():
            yield from s1
            yield from s2

    def counts(self) -> dict[str, int]:
        """Scored pairs per subset."""
        return {t: len(g) for t, (_, _, g) in self.subsets.items()}


# --------------------------------------------------------------------------- parsing helpers


def _norm(s: str) -> str:
    """SentEval's whitespace handling: ``" ".join(s.split())``.

    >>> _norm("  a  b\\u00a0c ")
    'a b c'
    """
    return " ".join(s.split())


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise CorpusFormatError(f"not UTF-8 ({e})", str(path), 1) from e
    return text.splitlines()


def _gold(value: str, path: Path, line: int) -> float | None:
    """A gold score, or None for a blank (unscored) line."""
    v = value.strip()
    if not v:
        return None
    try:
        x = float(v)
    except ValueError:
        raise CorpusFormatError(f"gold score {v!r} is not a number", str(path), line) from None
    if not math.isfinite(x):
        raise CorpusFormatError(f"gold score {v!r} is not finite", str(path), line)
    return x


def _pair(fields: Sequence[str], path: Path, line: int) -> tuple[str, str]:
    if len(fields) != 2:
        raise CorpusFormatError(
            f"expected 2 tab-separated sentences, found {len(fields)} field(s)", str(path), line
        )
    a, b = _norm(fields[0]), _norm(fields[1])
    if not a or not b:
        raise CorpusFormatError("empty sentence", str(path), line)
    return a, b


def _subset(rows: list[tuple[str, str, float | None]]) -> tuple[Subset, int]:
    s1, s2, gold, skipped = [], [], [], 0
    for a, b, g in rows:
        if g is None:
            skipped += 1
            continue
        s1.append(a)
        s2.append(b)
        gold.append(g)
    return (s1, s2, np.asarray(gold, dtype=np.float64)), skipped


def _year_name(text: str) -> str:
    """``STS12-en-test`` / ``2012`` / ``sts12`` -> ``STS12``.

    >>> _year_name("STS14-en-test"), _year_name("2015"), _year_name("sts2016"), _year_name("x")
    ('STS14', 'STS15', 'STS16', 'x')
    """
    m = re.match(r"(?:sts[-_]?(?:20)?|20)(\d\d)\b", text, flags=re.IGNORECASE)
    return f"STS{m.group(1)}" if m else text


def _check_dir(d: Path, what: str) -> None:
    if not d.is_dir():
        raise DataNotFoundError(
            f"{what} folder {d} not found; point paths.data_dir= at the shared data "
            "(see the data README) or use layout=hub online"
        )


# --------------------------------------------------------------------------- readers


def read_senteval_year(directory: str | os.PathLike) -> StsSet:
    """One STS year in SentEval's layout (``STS.input.<task>.txt`` + ``STS.gs.<task>.txt``).

    Tasks are the ``STS.input.*.txt`` files; ``STS.gs.ALL.txt``, readmes, licences and gold files
    without an input file (STS13's licensed-out SMT) are ignored.

    Raises:
        CorpusFormatError: a gold file is missing, input and gold line counts differ, a line is
            not 2 tab-separated sentences, or a gold score is not a number.
    """
    d = Path(directory)
    _check_dir(d, "SentEval STS")
    inputs = sorted(d.glob("STS.input.*.txt"))
    if not inputs:
        raise DataNotFoundError(f"no STS.input.*.txt file in {d}")
    subsets: dict[str, Subset] = {}
    skipped = 0
    for inp in inputs:
        task = inp.name.removeprefix("STS.input.").removesuffix(".txt")
        gs = d / f"STS.gs.{task}.txt"
        if not gs.is_file():
            raise CorpusFormatError(f"gold file {gs.name} missing for input {inp}", str(gs), None)
        lines, golds = _read_lines(inp), _read_lines(gs)
        if len(lines) != len(golds):
            raise CorpusFormatError(
                f"line counts differ: {inp} has {len(lines)} lines, {gs} has {len(golds)} "
                "(refusing to align them)"
            )
        rows = [
            (*_pair(line.split("\t"), inp, i), _gold(g, gs, i))
            for i, (line, g) in enumerate(zip(lines, golds, strict=True), start=1)
        ]
        subsets[task], k = _subset(rows)
        skipped += k
    ignored = sorted(
        p.name
        for p in d.glob("STS.gs.*.txt")
        if p.name != "STS.gs.ALL.txt" and not (d / p.name.replace(".gs.", ".input.", 1)).is_file()
    )
    if ignored:
        log.info("%s: gold files without an input file ignored: %s", d, ", ".join(ignored))
    return StsSet(_year_name(d.name), subsets, str(d), skipped, "senteval")


def read_original_year(year_dir: str | os.PathLike) -> StsSet:
    """One STS year in the original SemEval layout: ``<task>.test.tsv``, ``score<TAB>s1<TAB>s2``.

    Only ``*.test.tsv`` files are read (2012's ``*.train.tsv``, readmes, licences and scripts are
    ignored). An empty score is an unscored pair.
    """
    d = Path(year_dir)
    _check_dir(d, "SemEval STS")
    files = sorted(d.glob("*.test.tsv"))
    if not files:
        raise DataNotFoundError(f"no *.test.tsv file in {d}")
    subsets: dict[str, Subset] = {}
    skipped = 0
    for f in files:
        rows = []
        for i, line in enumerate(_read_lines(f), start=1):
            score, sep, rest = line.partition("\t")
            if not sep:
                raise CorpusFormatError("expected score<TAB>s1<TAB>s2, found no tab", str(f), i)
            rows.append((*_pair(rest.split("\t"), f, i), _gold(score, f, i)))
        subsets[f.name.removesuffix(".test.tsv")], k = _subset(rows)
        skipped += k
    return StsSet(_year_name(d.name), subsets, str(d), skipped, "original")


def _header_table(
    path: Path, columns: Sequence[str]
) -> tuple[list[tuple[int, list[str]]], list[int]]:
    lines = _read_lines(path)
    if not lines:
        raise CorpusFormatError("empty file", str(path), 1)
    header = lines[0].split("\t")
    missing = [c for c in columns if c not in header]
    if missing:
        raise CorpusFormatError(f"header lacks column(s) {missing}: {header}", str(path), 1)
    idx = [header.index(c) for c in columns]
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise CorpusFormatError(
                f"expected {len(header)} tab-separated fields, found {len(fields)}", str(path), i
            )
        rows.append((i, fields))
    return rows, idx


def read_sickr(path: str | os.PathLike, name: str = SICKR) -> StsSet:
    """SICK relatedness (``SICK_test_annotated.txt``: header, ``sentence_A``, ``sentence_B``,
    ``relatedness_score``)."""
    p = Path(path)
    if not p.is_file():
        raise DataNotFoundError(f"SICK file {p} not found")
    rows, (ia, ib, ig) = _header_table(p, ("sentence_A", "sentence_B", "relatedness_score"))
    parsed = [(*_pair([f[ia], f[ib]], p, i), _gold(f[ig], p, i)) for i, f in rows]
    sub, skipped = _subset(parsed)
    return StsSet(name, {"SICK-R": sub}, str(p), skipped, "sickr")


def read_stsb(path: str | os.PathLike, name: str = STSB_DEV) -> StsSet:
    """STS Benchmark: GLUE's ``STS-B/{dev,train}.tsv`` (header with ``sentence1``, ``sentence2``,
    ``score``) or the original ``stsbenchmark/sts-*.csv`` (no header; genre, file, year, id,
    score, s1, s2[, sources]).

    The default ``name`` suits the offline file (the full GLUE dev set); pass
    ``name="STSBenchmark"`` for the test set that SimCSE's table reports.
    """
    p = Path(path)
    if not p.is_file():
        raise DataNotFoundError(f"STS-B file {p} not found")
    lines = _read_lines(p)
    if lines and "sentence1" in lines[0].split("\t"):
        rows, (ia, ib, ig) = _header_table(p, ("sentence1", "sentence2", "score"))
        parsed = [(*_pair([f[ia], f[ib]], p, i), _gold(f[ig], p, i)) for i, f in rows]
        layout = "glue-stsb"
    else:
        parsed = []
        for i, line in enumerate(lines, start=1):
            f = line.split("\t")
            if len(f) < 7:
                raise CorpusFormatError(
                    f"expected >= 7 tab-separated fields (sts-*.csv), found {len(f)}", str(p), i
                )
            parsed.append((*_pair(f[5:7], p, i), _gold(f[4], p, i)))
        layout = "stsbenchmark"
    sub, skipped = _subset(parsed)
    return StsSet(name, {"STS-B": sub}, str(p), skipped, layout)


# --------------------------------------------------------------------------- suites


def _data_root(data_dir: Path) -> Path:
    """Accept the shared data root or its ``sts/`` folder; returns the root."""
    if not (data_dir / "sts").is_dir() and (data_dir / "senteval-layout").is_dir():
        return data_dir.parent
    return data_dir


def load_sts_suite(
    data_dir: str | os.PathLike,
    layout: str = "senteval",
    include: Sequence[str] = DEFAULT_INCLUDE,
    *,
    stsb_path: str | os.PathLike | None = None,
    stsb_name: str = STSB_DEV,
    sickr_path: str | os.PathLike | None = None,
) -> dict[str, StsSet]:
    """The STS suite keyed by set name, in ``include`` order.

    Args:
        data_dir: the shared data root (``paraamr.datadir.resolve_data_dir``); ignored for
            ``layout="hub"``.
        layout: ``senteval`` (lowercased/tokenized, with STS12-MSRvid: what SentEval/SimCSE
            read), ``original`` (original casing, no STS12-MSRvid) or ``hub`` (online only).
        include: any of ``STS12``..``STS16``, ``STSBenchmark``, ``SICKRelatedness``. STS years are
            required; STS-B and SICK-R are included when their files are present (STS-B offline
            is the GLUE dev set, named ``STSBenchmark-dev``).
        stsb_path, sickr_path: other STS-B / SICK-R files.
        stsb_name: the STS-B set's name; pass ``"STSBenchmark"`` with ``stsb_path`` pointing at
            the STS-B test set (what SimCSE's table reports).

    Raises:
        DataNotFoundError: a requested STS year is missing.
        ValueError: unknown layout or set name.
    """
    unknown = [n for n in include if n not in (*DEFAULT_INCLUDE, STSB_DEV)]
    if unknown:
        raise ConfigError(f"include: unknown STS set(s) {unknown}; known: {list(DEFAULT_INCLUDE)}")
    if layout not in ("senteval", "original", "hub"):
        raise ConfigError(f"layout must be senteval, original or hub, not {layout!r}")
    if layout == "hub":
        sets = [load_hub(n) for n in include]
        return {s.name: s for s in sets}
    root = _data_root(Path(data_dir))
    suite: dict[str, StsSet] = {}
    for n in include:
        if n in STS_YEARS:
            if layout == "senteval":
                s = read_senteval_year(root / SENTEVAL_DIR.format(name=n))
            else:
                s = read_original_year(root / ORIGINAL_DIR.format(yy=n[3:]))
        elif n in ("STSBenchmark", STSB_DEV):
            p = Path(stsb_path) if stsb_path else root / STSB_FILE
            if not p.is_file():
                log.info("STS-B file %s not found: STS-B left out", p)
                continue
            s = read_stsb(p, stsb_name)
        else:
            p = Path(sickr_path) if sickr_path else root / SICKR_FILE
            if not p.is_file():
                log.info("SICK file %s not found: SICK-R left out", p)
                continue
            s = read_sickr(p)
        log.info("%s: %d scored pairs, %d unscored skipped (%s)", s.name, s.n, s.skipped, s.source)
        suite[s.name] = s
    return suite


def load_hub(name: str, split: str | None = None) -> StsSet:
    """Load one set from the Hugging Face hub (**online only**; needs ``datasets``).

    ``name`` is a set name of :data:`HUB_NAMES` (``STS12`` -> ``mteb/sts12-sts``, test split) or
    a hub id with ``sentence1``/``sentence2``/``score`` columns. Hub copies carry no subset
    labels: each set is one subset, which gives the same "all"-setting figures.

    Raises:
        MissingDependencyError: ``datasets`` is not installed (``paraamr[online]``).
    """
    from paraamr.utils import require

    datasets = require("datasets", "layout=hub (STS from the hub; offline: a local copy)")
    hub, default_split = HUB_NAMES.get(name, (name, "test"))
    split = split or default_split
    ds = datasets.load_dataset(hub, split=split)
    where = Path(f"hf:{hub}:{split}")
    rows = [
        (
            *_pair([r["sentence1"], r["sentence2"]], where, i),
            _gold("" if r["score"] is None else str(r["score"]), where, i),
        )
        for i, r in enumerate(ds, start=1)
    ]
    sub, skipped = _subset(rows)
    set_name = name if name in HUB_NAMES else hub.rsplit("/", 1)[-1]
    return StsSet(set_name, {"all": sub}, f"hf:{hub}:{split}", skipped, "hub")
