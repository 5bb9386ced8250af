"""The one job-result record: what every one-seed job writes, and the one reader of them.

Each job of a sweep (a SimCSE run of Table 5, an SCPN run of Table 6, a few-shot run of
Table 7, a TOP run) ends by writing ``<out_dir>/results.json`` through
:meth:`JobResult.write` (atomically: a job killed while writing leaves its previous result or
none). The file is the job's own fields under a fixed header::

    {"job": "simcse", "seed": 0, "signature": "...", <the job's fields...>,
     "files": {...}, "seconds": 812.4, "measured": {"date": ..., "cpu": ..., "cores": 2}}

``job`` says which job wrote it, ``signature`` everything that changes its numbers (seeds pool
only where the signatures agree but for ``seed:N``: :func:`paraamr.tables.sweep.split_settings`),
``files`` what it left beside the record, ``seconds`` its wall time and ``measured`` the date
and machine (:func:`paraamr.utils.measured_on`). :func:`read_results` is the one reader the
table gatherers use.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> JobResult("simcse", 1, "model:m|seed:1", {"corpus": "A", "acc": 70.0}).write(d / "s1").name
'results.json'
>>> [(r["job"], r["corpus"], r["acc"], r["run_dir"] == str(d / "s1")) for r in read_results(d)]
[('simcse', 'A', 70.0, True)]
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paraamr.errors import DataNotFoundError, InputError
from paraamr.utils import measured_on, write_json_atomic

__all__ = ["RESULT_FILE", "JOBS", "HEADER", "JobResult", "read_results", "Stopwatch"]

#: the file name every one-seed job writes its record to
RESULT_FILE = "results.json"
#: the jobs that write one, and the table (or page) that gathers them
JOBS = {
    "simcse": "Table 5 (analysis/make_table5.py)",
    "scpn": "Table 6 (analysis/make_table6.py)",
    "fewshot": "Table 7 (analysis/make_table7.py)",
    "top": "the TOP tables (analysis/make_top.py)",
}
#: the record's own keys; a job's fields may not use them
HEADER = ("job", "seed", "signature", "files", "seconds", "measured")


@dataclass(frozen=True)
class JobResult:
    """One job's record (see the module docstring).

    ``fields`` are the job's own: the keys its table groups rows by (``corpus``, ``task``...)
    and its numbers, in the order its readers lay them out (the file keeps that order).
    """

    job: str
    seed: int
    signature: str
    fields: Mapping[str, Any]
    files: Mapping[str, str] = field(default_factory=dict)
    seconds: float | None = None
    measured: Mapping[str, Any] = field(default_factory=measured_on)

    def __post_init__(self) -> None:
        if self.job not in JOBS:
            raise ValueError(f"job must be one of {sorted(JOBS)}, got {self.job!r}")
        clash = sorted(set(self.fields) & set(HEADER))
        if clash:
            raise ValueError(f"a job's fields may not use the record's own keys: {clash}")

    def to_dict(self) -> dict[str, Any]:
        """The header, the job's fields, then ``files``, ``seconds``, ``measured``."""
        seconds = None if self.seconds is None else round(float(self.seconds), 1)
        return {"job": self.job, "seed": int(self.seed), "signature": str(self.signature),
                **self.fields, "files": {k: str(v) for k, v in self.files.items()},
                "seconds": seconds, "measured": dict(self.measured)}  # fmt: skip

    def write(self, out_dir: str | Path) -> Path:
        """Write ``<out_dir>/results.json`` atomically; returns its path."""
        path = Path(out_dir) / RESULT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, self.to_dict(), default=str, sort_keys=False)
        return path


class Stopwatch:
    """A job's wall time since it was made, for :attr:`JobResult.seconds`.

    >>> Stopwatch().seconds() >= 0
    True
    """

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def seconds(self) -> float:
        return time.perf_counter() - self.start


def _read_one(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not a job result (bad JSON: {e.msg})") from None
    missing = [k for k in ("job", "seed", "signature") if k not in record] if isinstance(
        record, dict) else ["a JSON object"]  # fmt: skip
    if missing:
        raise InputError(f"{path}: not a job result (no {', '.join(missing)}): written by an "
                         "older version of the job? rerun it")  # fmt: skip
    return {**record, "run_dir": str(path.parent)}


def read_results(root: str | Path, job: str | None = None) -> list[dict[str, Any]]:
    """Every job record under ``root`` (a sweep's run folder, searched recursively; or one
    ``results.json``), in path order, each with ``run_dir`` (the folder it is in); with
    ``job``, only that job's records. Raises :class:`~paraamr.errors.DataNotFoundError` when
    there are none (the message says what would make them) and
    :class:`~paraamr.errors.InputError` on a file that is no record (file and line)."""
    root = Path(root)
    if job is not None and job not in JOBS:
        raise ValueError(f"job must be one of {sorted(JOBS)}, got {job!r}")
    if not root.exists():
        raise DataNotFoundError(f"{root}: no such folder (run the jobs first)")
    paths = [root] if root.is_file() else sorted(root.rglob(RESULT_FILE))
    records = [r for r in map(_read_one, paths) if job is None or r["job"] == job]
    if not records:
        what = f"{job} job" if job else "job"
        for_ = f" ({JOBS[job]} gathers them)" if job else ""
        raise DataNotFoundError(f"{root}: no {RESULT_FILE} of a {what} under it{for_}: run the "
                                "jobs first")  # fmt: skip
    return records
