"""Streaming readers for paraphrase corpora. Memory stays flat whatever the corpus size.

Formats (``FORMATS``):

=====================  ===============================================================
``paraamr``            JSON lines, the ParaAMR release format (canonical)
``paranmt``            ParaNMT-50M: ``reference<TAB>paraphrase[<TAB>score]``
``parabank1``          ParaBank 1 TSV: ``reference<TAB>paraphrase[<TAB>paraphrase...]``
``parabank2``          ParaBank 2 TSV: ``score<TAB>reference<TAB>paraphrase[<TAB>...]``
``pairs``              plain ``source<TAB>paraphrase`` TSV
``msrp``               MSR Paraphrase Corpus TSV (header ``Quality #1 ID #2 ID #1 String
                       #2 String``): the positive pairs (Quality 1), sentence 1 as source
``parabank-eval-paranmt``    ParaBank-Eval directory, ``sys_id`` 35 (ParaNMT-50M output)
``parabank-eval-parabank1``  ParaBank-Eval directory, every other non-zero ``sys_id``
``pan-train``, ``pan-test``  PAN directory (``pan-<split>_s1.txt``, ``_s2.txt``, ``.labels``):
                       the positive pairs of that split, sentence 1 as source
``src-trg``            line-aligned ``<prefix>_src.txt`` / ``<prefix>_trg.txt`` (QQP-Pos,
                       ParaNMT-small): the path names the ``_src.txt`` file
=====================  ===============================================================

In the one-pair-per-line layouts, consecutive lines with the same source form one record.

Examples:
    >>> import io, json, tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "c.tsv")
    >>> _ = open(p, "w").write("A cat.\\tOne cat.\\nA cat.\\tThe cat.\\nDogs.\\tHounds.\\n")
    >>> [(r.text, len(r.paraphrases)) for r in read_corpus(p, "pairs")]
    [('A cat.', 2), ('Dogs.', 1)]
"""

from __future__ import annotations

import csv
import errno
import itertools
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.records import Paraphrase, SourceRecord
from paraamr.errors import CorpusFormatError, DataNotFoundError, InputError

__all__ = [
    "FORMATS",
    "FOLDER_FORMATS",
    "read_corpus",
    "check_corpus_path",
    "require_records",
    "guess_format",
    "iter_lines",
    "read_quoted_tsv",
    "parabank_eval_files",
    "write_corpus",
]

PARANMT_SYS_ID = "35"
COPY_SYS_ID = "0"
_NONE = object()


def require_records(
    items: Iterable, path: str | os.PathLike, what: str = "pairs", skips: SkipLog | None = None
) -> Iterator:
    """``items`` unchanged, the first one read now: none at all is an :class:`InputError`
    ``<path>: no <what> (empty input)`` (or ``(N bad records skipped)``) before anything else
    runs. The one check of every command that reads a corpus.

    >>> list(require_records(iter([1, 2]), "x.tsv"))
    [1, 2]
    >>> require_records(iter([]), "empty.tsv")
    Traceback (most recent call last):
    paraamr.errors.InputError: empty.tsv: no pairs (empty input)
    """
    it = iter(items)
    first = next(it, _NONE)
    if first is _NONE:
        why = f"{skips.total} bad records skipped" if skips is not None and skips.total else None
        raise InputError(f"{path}: no {what} ({why or 'empty input'})")
    return itertools.chain([first], it)


def iter_lines(path: str | os.PathLike, skips: SkipLog) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` (1-based, newline stripped); undecodable lines go to ``skips``.

    A leading UTF-8 byte-order mark is removed.
    """
    path = str(path)
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                skips.skip(f"undecodable bytes ({e.reason} at byte {e.start})", path, n)
                continue
            if n == 1:
                text = text.lstrip("\ufeff")
            yield n, text.rstrip("\r\n")


def _clean(text: object, what: str, skips: SkipLog, path: str, line: int) -> str | None:
    if not isinstance(text, str):
        skips.skip(f"{what} is not a string", path, line)
        return None
    if not text.strip():
        skips.skip(f"empty {what}", path, line)
        return None
    return text.strip()


def _read_jsonl(path: str, skips: SkipLog) -> Iterator[SourceRecord]:
    for n, line in iter_lines(path, skips):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            skips.skip(f"malformed JSON ({e.msg} at column {e.colno})", path, n)
            continue
        if not isinstance(obj, dict):
            skips.skip("JSON line is not an object", path, n)
            continue
        if "text" not in obj:
            skips.skip("missing field 'text'", path, n)
            continue
        try:
            rec = SourceRecord.from_json(obj, path, n)
        except KeyError as e:
            skips.skip(f"missing field {e.args[0]!r} in a paraphrase", path, n)
            continue
        except (TypeError, ValueError) as e:
            skips.skip(f"bad field: {e}", path, n)
            continue
        text = _clean(rec.text, "source sentence", skips, path, n)
        if text is None:
            continue
        paras = []
        for p in rec.paraphrases:
            t = _clean(p.text, "paraphrase", skips, path, n)
            if t is not None:
                paras.append(Paraphrase(t, p.perplexity, p.parse, p.extra))
        rec.text, rec.paraphrases = text, paras
        yield rec


def _read_tsv(path: str, skips: SkipLog, fmt: str) -> Iterator[SourceRecord]:
    """One-reference-per-line TSV layouts, grouping consecutive lines with the same source."""
    current: SourceRecord | None = None
    for n, line in iter_lines(path, skips):
        if not line.strip():
            continue
        cols = line.split("\t")
        if fmt == "parabank2":
            if len(cols) < 3:
                skips.skip(
                    f"expected score, reference and >=1 paraphrase, got {len(cols)} columns",
                    path,
                    n,
                )
                continue
            try:
                score = float(cols[0])
            except ValueError:
                skips.skip(f"first column is not a score: {cols[0][:30]!r}", path, n)
                continue
            src, paras, extra = cols[1], cols[2:], {"score": score}
        elif fmt == "paranmt":
            if len(cols) not in (2, 3):
                skips.skip(f"expected 2 or 3 columns, got {len(cols)}", path, n)
                continue
            src, paras, extra = cols[0], [cols[1]], {}
            if len(cols) == 3:
                try:
                    extra = {"score": float(cols[2])}
                except ValueError:
                    skips.skip(f"third column is not a score: {cols[2][:30]!r}", path, n)
                    continue
        elif fmt == "pairs":
            if len(cols) != 2:
                skips.skip(f"expected 2 columns (source, paraphrase), got {len(cols)}", path, n)
                continue
            src, paras, extra = cols[0], [cols[1]], {}
        else:  # parabank1
            if len(cols) < 2:
                skips.skip(
                    f"expected reference and >=1 paraphrase, got {len(cols)} columns", path, n
                )
                continue
            src, paras, extra = cols[0], cols[1:], {}
        src_c = _clean(src, "source sentence", skips, path, n)
        if src_c is None:
            continue
        kept = [
            Paraphrase(t) for t in (_clean(p, "paraphrase", skips, path, n) for p in paras) if t
        ]
        if current is not None and current.text == src_c:
            current.paraphrases.extend(kept)
            continue
        if current is not None:
            yield current
        current = SourceRecord(src_c, kept, extra=dict(extra), path=path, line=n)
    if current is not None:
        yield current


def _read_msrp(path: str, skips: SkipLog) -> Iterator[SourceRecord]:
    """MSRP positive pairs; the header line is checked, negative pairs are not records."""
    lines = iter_lines(path, skips)
    first = next(lines, None)
    if first is None or not first[1].startswith("Quality\t"):
        raise CorpusFormatError("expected the MSRP header 'Quality<TAB>#1 ID<TAB>...'", path, 1)
    for n, line in lines:
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 5 or cols[0] not in ("0", "1"):
            skips.skip(f"expected 5 columns with Quality 0/1, got {len(cols)} columns", path, n)
            continue
        if cols[0] != "1":
            continue
        src = _clean(cols[3], "sentence 1", skips, path, n)
        para = _clean(cols[4], "sentence 2", skips, path, n)
        if src and para:
            yield SourceRecord(src, [Paraphrase(para)], extra={"ids": cols[1:3]}, path=path, line=n)


def read_quoted_tsv(
    path: str | os.PathLike,
    skips: SkipLog,
    required: tuple[str, ...] = (),
    *,
    delimiter: str = "\t",
    multiline: bool = False,
) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of a CSV-quoted TSV file with a header line, rows as dicts by column.

    ``delimiter=","`` reads a CSV file the same way (MTurk batch results); ``multiline=True``
    accepts a quoted field holding a line break (the row's line is its first line).

    CSV quoting: a field holding a double quote is wrapped in quotes with its quotes doubled
    (``"I ""went"" out."``); a quote inside an unwrapped field is literal. Empty lines are
    ignored. Skipped and counted (or raised, with ``on_error="raise"``) with their line: a row
    of another width than the header, a row that is not one physical line (a quoted field
    holding a line break), an undecodable line. Malformed quoting (``"a"b``, a quote left open
    to the end) and a header without the ``required`` columns raise
    :class:`CorpusFormatError` naming the file and line.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.tsv")
    >>> _ = open(p, "w").write('id\\ttext\\n7\\t"I ""went"" out."\\n8\\tSay "hi".\\n')
    >>> list(read_quoted_tsv(p, SkipLog("raise"), required=("text",)))
    [(2, {'id': '7', 'text': 'I "went" out.'}), (3, {'id': '8', 'text': 'Say "hi".'})]
    """
    path = str(path)
    consumed: list[int] = []

    def texts() -> Iterator[str]:
        for n, text in iter_lines(path, skips):
            consumed.append(n)
            yield text

    reader = csv.reader(texts(), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    while True:
        consumed.clear()
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            line = consumed[0] if consumed else None
            raise CorpusFormatError(f"bad CSV quoting: {e}", path, line) from None
        first, last = consumed[0], consumed[-1]
        if not row:
            continue
        if header is None:
            header = row
            missing = [c for c in required if c not in header]
            if missing:
                raise CorpusFormatError(
                    f"header lacks column(s) {', '.join(missing)}; expected {' '.join(required)}",
                    path,
                    first,
                )
        elif last != first and not multiline:
            skips.skip(f"row spans lines {first}-{last} (a quoted line break)", path, first)
        elif len(row) != len(header):
            skips.skip(
                f"expected {len(header)} columns (as the header), got {len(row)}", path, first
            )
        else:
            yield first, dict(zip(header, row, strict=True))
    if header is None:
        raise CorpusFormatError("empty file (expected a header line)", path, 1)


def parabank_eval_files(path: str | os.PathLike) -> tuple[Path, Path]:
    """``ref.tsv`` and ``candidates.tsv`` of a ParaBank-Eval directory (the corpus reader's and
    the judgement reader's files).

    Raises:
        DataNotFoundError: either file is missing (the message names it).
    """
    root = Path(path)
    ref_path, cand_path = root / "ref.tsv", root / "candidates.tsv"
    for p in (ref_path, cand_path):
        if not p.is_file():
            raise DataNotFoundError(
                f"{p} not found: ParaBank-Eval needs ref.tsv and candidates.tsv"
            )
    return ref_path, cand_path


def _read_parabank_eval(path: str, skips: SkipLog, system: str) -> Iterator[SourceRecord]:
    """ParaBank-Eval (``ref.tsv`` + ``candidates.tsv``): one record per reference, distinct
    candidates of the chosen system(s), in file order. The set is small (400 sources).

    Both files are CSV-quoted TSV: a field with a double quote is wrapped in quotes and its
    quotes doubled (``"I ""went out"" once."``), so they are read with CSV quoting (reading
    them verbatim kept the wrapping quotes on 12 references and 766 candidate rows)."""
    ref_path, cand_path = parabank_eval_files(path)
    refs: dict[str, tuple[str, int]] = {}
    for n, row in read_quoted_tsv(ref_path, skips, ("ref_id", "ref_sent")):
        if not row.get("ref_sent", "").strip():
            skips.skip("empty reference sentence", str(ref_path), n)
            continue
        refs[row["ref_id"]] = (row["ref_sent"].strip(), n)
    cands: dict[str, list[str]] = {k: [] for k in refs}
    for n, row in read_quoted_tsv(cand_path, skips, ("ref_id", "sys_id", "candidate")):
        ids = (row.get("sys_id") or "").split()
        if not ids or row.get("ref_id") not in cands:
            skips.skip("candidate without sys_id or with an unknown ref_id", str(cand_path), n)
            continue
        if system == "paranmt":
            wanted = PARANMT_SYS_ID in ids
        else:
            wanted = any(i not in (PARANMT_SYS_ID, COPY_SYS_ID) for i in ids)
        text = (row.get("candidate") or "").strip()
        if wanted and text and text not in cands[row["ref_id"]]:
            cands[row["ref_id"]].append(text)
    for ref_id, (text, n) in refs.items():
        yield SourceRecord(
            text,
            [Paraphrase(c) for c in cands[ref_id]],
            extra={"ref_id": ref_id},
            path=str(ref_path),
            line=n,
        )


#: the formats whose path is a folder (every other reads one file)
FOLDER_FORMATS = ("parabank-eval-paranmt", "parabank-eval-parabank1", "pan-train", "pan-test")

FORMATS = (
    "paraamr",
    "paranmt",
    "parabank1",
    "parabank2",
    "pairs",
    "msrp",
    "parabank-eval-paranmt",
    "parabank-eval-parabank1",
    "pan-train",
    "pan-test",
    "src-trg",
)


def _aligned(files: list[Path], skips: SkipLog) -> Iterator[tuple[int, list[str]]]:
    """``(line, [text of each file])`` of line-aligned files; files of different lengths raise,
    naming each file's count."""
    lengths = []
    for f in files:
        with open(f, "rb") as fh:
            lengths.append(sum(1 for _ in fh))
    if len(set(lengths)) != 1:
        counts = ", ".join(f"{f.name} {n}" for f, n in zip(files, lengths, strict=True))
        raise CorpusFormatError(f"line-aligned files differ in length: {counts}", str(files[0]))
    # by line number: an undecodable line (skipped by iter_lines) drops that line of every file
    texts = [dict(iter_lines(f, skips)) for f in files]
    for n in range(1, lengths[0] + 1):
        if all(n in t for t in texts):
            yield n, [t[n] for t in texts]


def _pair_records(rows, skips: SkipLog, path: str) -> Iterator[SourceRecord]:
    """Records from ``(line, source, paraphrase)``; consecutive equal sources form one record."""
    current: SourceRecord | None = None
    for n, src, para in rows:
        a = _clean(src, "source sentence", skips, path, n)
        b = _clean(para, "paraphrase", skips, path, n) if a else None
        if not (a and b):
            continue
        if current is not None and current.text == a:
            current.paraphrases.append(Paraphrase(b))
            continue
        if current is not None:
            yield current
        current = SourceRecord(a, [Paraphrase(b)], path=path, line=n)
    if current is not None:
        yield current


def _read_pan(path: str, skips: SkipLog, split: str) -> Iterator[SourceRecord]:
    """PAN's positive pairs of ``split``; a label other than 0/1 is a bad record (file:line)."""
    d = Path(path)
    files = [d / f"pan-{split}_s1.txt", d / f"pan-{split}_s2.txt", d / f"pan-{split}.labels"]
    for f in files:
        if not f.is_file():
            raise DataNotFoundError(f"PAN {split} file {f} does not exist")

    def positives() -> Iterator[tuple[int, str, str]]:
        for n, (a, b, label) in _aligned(files, skips):
            if label.strip() not in ("0", "1"):
                skips.skip(f"label must be 0 or 1, got {label!r}", str(files[2]), n)
            elif label.strip() == "1":
                yield n, a, b

    return _pair_records(positives(), skips, str(files[0]))


def _read_src_trg(path: str, skips: SkipLog) -> Iterator[SourceRecord]:
    """``<prefix>_src.txt`` and its ``<prefix>_trg.txt``, line by line."""
    src = Path(path)
    if not src.name.endswith("_src.txt"):
        raise CorpusFormatError(f"src-trg: name the <prefix>_src.txt file, got {src.name}", path)
    trg = src.with_name(src.name.removesuffix("_src.txt") + "_trg.txt")
    if not trg.is_file():
        raise DataNotFoundError(f"src-trg: {trg} (the targets of {src.name}) does not exist")
    rows = ((n, a, b) for n, (a, b) in _aligned([src, trg], skips))
    return _pair_records(rows, skips, path)


def guess_format(path: str | os.PathLike) -> str:
    """``paraamr`` for ``.jsonl``/``.json``, ``src-trg`` for ``*_src.txt``, ``pairs`` for
    ``.tsv``/``.txt``; else an error."""
    if Path(path).name.endswith("_src.txt"):
        return "src-trg"
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json"):
        return "paraamr"
    if suffix in (".tsv", ".txt"):
        return "pairs"
    raise CorpusFormatError(f"cannot guess the format of {path}; give one of {FORMATS}")


def check_corpus_path(path: str | os.PathLike, fmt: str | None = None) -> None:
    """Fail at once, naming the path, when a corpus cannot be opened: it does not exist, or it
    is a folder where ``fmt`` reads a file (all formats but :data:`FOLDER_FORMATS`).

    >>> import tempfile
    >>> check_corpus_path(tempfile.mkdtemp(), "pan-test")
    >>> check_corpus_path("/", "pairs")
    Traceback (most recent call last):
    IsADirectoryError: [Errno 21] Is a directory, not a file: '/'
    """
    path = str(path)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
    if os.path.isdir(path) and fmt not in FOLDER_FORMATS:
        raise IsADirectoryError(errno.EISDIR, "Is a directory, not a file", path)


def read_corpus(
    path: str | os.PathLike,
    fmt: str | None = None,
    skips: SkipLog | None = None,
) -> Iterator[SourceRecord]:
    """Stream the records of a corpus file.

    Args:
        path: the corpus file (a directory for the ParaBank-Eval formats).
        fmt: one of :data:`FORMATS`; guessed from the extension when ``None``.
        skips: bad-record policy and counter; default raises on the first bad record.
    """
    skips = skips if skips is not None else SkipLog("raise")
    path = str(path)
    if fmt is not None and fmt not in FORMATS:
        raise CorpusFormatError(f"unknown corpus format {fmt!r}; known: {', '.join(FORMATS)}")
    check_corpus_path(path, fmt)
    fmt = fmt or guess_format(path)
    if fmt == "paraamr":
        return _read_jsonl(path, skips)
    if fmt == "msrp":
        return _read_msrp(path, skips)
    if fmt.startswith("parabank-eval-"):
        return _read_parabank_eval(path, skips, fmt.removeprefix("parabank-eval-"))
    if fmt.startswith("pan-"):
        return _read_pan(path, skips, fmt.removeprefix("pan-"))
    if fmt == "src-trg":
        return _read_src_trg(path, skips)
    return _read_tsv(path, skips, fmt)


def write_corpus(records, path: str | os.PathLike) -> int:
    """Write records in the canonical JSON-lines format atomically; returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
            n += 1
    os.replace(tmp, path)
    return n
