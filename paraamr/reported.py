"""The numbers the handbook reports, one small signed file each, rendered into the pages.

A measured result the README or a docs page cites lives in ``docs/results/<name>.json``::

    {"title": "...", "date": "2026-12-07", "machine": "2-core Intel Xeon (AMX), 24 GB",
     "command": "make compare ...", "data": "...", "models": "...",
     "columns": ["row", "Spearman"], "rows": [["ParaNMT", "61.2 ± 0.4"], ...],
     "notes": ["..."]}

A page shows it between two markers, ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``;
:func:`render_block` writes what goes between them (the table, then one line with the date,
machine and command). A file may also carry ``experiment``, ``summary`` (one short cell) and
``page``: ``<!-- summary:A,B,... -->`` ... ``<!-- /summary -->`` renders one row per file
(experiment, result, when and where: the README's headline table, :func:`render_summary`).
:func:`render_docs` rewrites every page's blocks from the files (``make results-docs``), and
``tests/test_reported.py`` fails when a block differs from its files (a number changed by
hand) or a file lacks its date, machine or command.

>>> r = Reported("x", {"title": "T", "date": "2026-12-07", "machine": "m", "command": "c",
...                    "columns": ["a", "b"], "rows": [[1, "2.0"]]})
>>> print(render_block(r))
| a | b |
|---|---|
| 1 | 2.0 |
<BLANKLINE>
*T. Measured 2026-12-07 on m: `c`.*
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.errors import InputError
from paraamr.markdown import markdown_grid

__all__ = [
    "REQUIRED",
    "RESULTS_DIR",
    "Reported",
    "load_reported",
    "render_block",
    "render_summary",
    "blocks_in",
    "render_text",
    "render_docs",
]

ROOT = Path(__file__).resolve().parents[1]
#: where the files live
RESULTS_DIR = ROOT / "docs" / "results"
#: what every file must say
REQUIRED = ("title", "date", "machine", "command", "columns", "rows")
_BLOCK = re.compile(r"<!-- results:([\w.-]+) -->\n(.*?)<!-- /results:\1 -->", re.S)
_SUMMARY = re.compile(r"<!-- summary:([\w.,-]+) -->\n(.*?)<!-- /summary -->", re.S)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Reported:
    """One results file: its name (the file's stem) and its content."""

    name: str
    data: Mapping[str, Any]

    def __post_init__(self) -> None:
        missing = [k for k in REQUIRED if not self.data.get(k)]
        if missing:
            raise InputError(f"results file {self.name}: no {', '.join(missing)}")
        if not _DATE.match(str(self.data["date"])):
            raise InputError(f"results file {self.name}: date {self.data['date']!r} is not "
                             "YYYY-MM-DD")  # fmt: skip
        width = len(self.data["columns"])
        for i, row in enumerate(self.data["rows"], 1):
            if len(row) != width:
                raise InputError(f"results file {self.name}: row {i} has {len(row)} cells, "
                                 f"the columns {width}")  # fmt: skip


def load_reported(name: str, root: Path = RESULTS_DIR) -> Reported:
    """``<root>/<name>.json`` (a one-line error naming the file when it is missing or bad)."""
    path = root / f"{name}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such results file") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: bad JSON ({e.msg})") from None
    return Reported(name, data)


def render_block(r: Reported) -> str:
    """The text between a block's markers: the table, its notes, the provenance line."""
    d = r.data
    lines = markdown_grid(d["columns"], d["rows"])
    lines += ["", *(f"{n}" for n in d.get("notes") or [])]
    if d.get("notes"):
        lines.append("")
    lines.append(f"*{d['title']}. Measured {d['date']} on {d['machine']}: `{d['command']}`.*")
    return "\n".join(lines)


def render_summary(rs: Iterable[Reported]) -> str:
    """One row per file: the experiment (linked to its page), its one-cell summary, and when and
    on what it was measured."""
    rows = []
    for r in rs:
        d = r.data
        missing = [k for k in ("experiment", "summary") if not d.get(k)]
        if missing:
            raise InputError(f"results file {r.name}: no {', '.join(missing)} for a summary row")
        what = f"[{d['experiment']}]({d['page']})" if d.get("page") else d["experiment"]
        rows.append([what, d["summary"], f"{d['date']}, {d['machine']}"])
    return "\n".join(markdown_grid(["experiment", "result", "measured"], rows))


def blocks_in(text: str) -> list[tuple[str, str]]:
    """``(name, current content)`` of every results block of a page (a summary block gives one
    entry per file it names)."""
    out = [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]
    out += [(n, m.group(2)) for m in _SUMMARY.finditer(text) for n in m.group(1).split(",")]
    return out


def render_text(text: str, root: Path = RESULTS_DIR) -> str:
    """``text`` with every results block rendered from its file."""

    def sub(m: re.Match) -> str:
        name = m.group(1)
        body = render_block(load_reported(name, root))
        return f"<!-- results:{name} -->\n{body}\n<!-- /results:{name} -->"

    def summary(m: re.Match) -> str:
        names = m.group(1)
        body = render_summary(load_reported(n, root) for n in names.split(","))
        return f"<!-- summary:{names} -->\n{body}\n<!-- /summary -->"

    return _SUMMARY.sub(summary, _BLOCK.sub(sub, text))


def render_docs(pages: Iterable[Path], root: Path = RESULTS_DIR) -> list[Path]:
    """Rewrite every page's results blocks from the files; returns the pages that changed."""
    changed = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = render_text(text, root)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def main(argv: list[str] | None = None) -> None:
    """``python -m paraamr.reported``: render every page's results blocks (make results-docs)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m paraamr.reported", description=main.__doc__)
    ap.parse_args(argv)
    for page in render_docs(_pages()):
        print(f"rendered {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
