"""Read collected answers: MTurk batch results and the annotation page's downloads.

Every answer becomes :class:`Judgement` (one annotator, one item, one question, a score 1-3)
that remembers its file and line, so every later complaint can name them. Formats, told apart
by their content:

- **MTurk batch results** (``Batch_*_batch_results.csv``): the columns MTurk writes
  (``HITId``, ``WorkerId``, ``AssignmentStatus``, ``Input.item_id``, ``Input.source``,
  ``Input.paraphrase``, ``Answer.similarity``, ``Answer.diversity``, ...). Rejected
  assignments are left out and counted;
- **page downloads**: the CSV (``kit,annotator,item_id,similarity,diversity,answered_at``) or
  the JSON (``{"format": "paraamr-humaneval-answers/1", "kit", "annotator", "answers"}``).

An answer that is empty (a question skipped on the page) is not a judgement; one outside 1-3 is
bad input (raised with file and line, or skipped and counted with ``on_error="skip"``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import read_quoted_tsv
from paraamr.errors import CorpusFormatError
from paraamr.humaneval.questions import QUESTIONS, SCORES

__all__ = ["Judgement", "Answers", "read_answers", "PAGE_FORMAT"]

PAGE_FORMAT = "paraamr-humaneval-answers/1"
FIELDS = tuple(q.field for q in QUESTIONS)
MTURK_REQUIRED = ("WorkerId", "AssignmentStatus", "Input.item_id")


@dataclass(frozen=True)
class Judgement:
    """One score given by one annotator to one question of one item."""

    item_id: str
    annotator: str
    question: str
    score: int
    path: str
    line: int | str
    shown: tuple[str, str] | None = None  # (source, paraphrase) as the batch showed them


@dataclass
class Answers:
    """Judgements read from answer files, plus what was left out and why."""

    judgements: list[Judgement] = field(default_factory=list)
    kits: dict[str, str] = field(default_factory=dict)  # path -> kit id its answers name
    rejected: int = 0  # MTurk assignments with AssignmentStatus Rejected
    files: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # judgements per file


def _score(raw: object, question: str, skips: SkipLog, path: str, line: int | str) -> int | None:
    """``None`` for an empty answer; the score, or a skip, otherwise."""
    text = "" if raw is None else str(raw).strip()
    if not text:
        return None
    try:
        value = int(float(text))
        ok = float(text) == value and value in SCORES
    except ValueError:
        ok = False
    if not ok:
        skips.skip("an answer is not one of 1, 2, 3", path, line, f"{question} = {text!r}")
        return None
    return value


def _add(out: Answers, item: str, who: str, row: dict, skips: SkipLog, path: str, line,
         shown=None) -> None:  # fmt: skip
    if not item.strip():
        skips.skip("empty item id", path, line)
        return
    if not who.strip():
        skips.skip("empty annotator id", path, line)
        return
    for q in FIELDS:
        s = _score(row.get(q), q, skips, path, line)
        if s is not None:
            out.judgements.append(Judgement(item.strip(), who.strip(), q, s, path, line, shown))
            out.counts[path] += 1


def _read_mturk(path: str, out: Answers, skips: SkipLog) -> None:
    rows = read_quoted_tsv(path, skips, MTURK_REQUIRED, delimiter=",", multiline=True)
    for line, row in rows:
        if row["AssignmentStatus"].strip() == "Rejected":
            out.rejected += 1
            continue
        answers = {q: row.get(f"Answer.{q}") for q in FIELDS}
        shown = None
        if "Input.source" in row and "Input.paraphrase" in row:
            shown = (row["Input.source"], row["Input.paraphrase"])
        _add(out, row["Input.item_id"], row["WorkerId"], answers, skips, path, line, shown)


def _read_page_csv(path: str, out: Answers, skips: SkipLog) -> None:
    kits = set()
    for line, row in read_quoted_tsv(path, skips, ("kit", "annotator", "item_id"), delimiter=","):
        kits.add(row["kit"].strip())
        _add(out, row["item_id"], row["annotator"], row, skips, path, line)
    if len(kits) > 1:
        raise CorpusFormatError(f"answers of several kits in one file: {sorted(kits)}", path, 1)
    if kits:
        out.kits[path] = kits.pop()


def _read_page_json(path: str, out: Answers, skips: SkipLog) -> None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", None)
        raise CorpusFormatError(f"not JSON: {e}", path, line) from None
    if not isinstance(data, dict) or data.get("format") != PAGE_FORMAT:
        raise CorpusFormatError(f"not a download of the annotation page (format {PAGE_FORMAT})",
                                path, 1)  # fmt: skip
    who = str(data.get("annotator") or "")
    answers = data.get("answers")
    if not isinstance(answers, list):
        raise CorpusFormatError("'answers' is not a list", path, 1)
    out.kits[path] = str(data.get("kit"))
    for i, row in enumerate(answers):
        where = f"answers[{i}]"
        if not isinstance(row, dict):
            skips.skip("answer is not an object", path, where)
            continue
        _add(out, str(row.get("item_id") or ""), str(row.get("annotator") or who), row, skips,
             path, where)  # fmt: skip


def _kind(path: str) -> str:
    if path.endswith(".json"):
        return "page-json"
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = fh.readline()
    if "AssignmentStatus" in header or "Input.item_id" in header:
        return "mturk"
    if header.startswith("kit,") or ",kit," in header:
        return "page-csv"
    raise CorpusFormatError(
        "neither MTurk batch results (WorkerId, AssignmentStatus, Input.item_id, Answer.*) nor "
        "a download of the annotation page (kit,annotator,item_id,...)",
        path,
        1,
    )


def read_answers(paths: list[str], skips: SkipLog) -> Answers:
    """Read every answer file (MTurk results and page downloads, mixed freely).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(p, "w").write("kit,annotator,item_id,similarity,diversity\\nk1,ann,x1,3,\\n")
    >>> a = read_answers([p], SkipLog("raise"))
    >>> [(j.item_id, j.question, j.score) for j in a.judgements], a.kits[p]
    ([('x1', 'similarity', 3)], 'k1')
    """
    out = Answers()
    for p in paths:
        p = str(p)
        if not Path(p).is_file():
            raise FileNotFoundError(2, "No such file or directory", p)
        out.files.append(p)
        {"mturk": _read_mturk, "page-csv": _read_page_csv, "page-json": _read_page_json}[_kind(p)](
            p, out, skips
        )
    return out
