"""The handbook's numbers come from their results files: a number changed by hand in a page, or
a file without its date, machine or command, fails here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from paraamr.errors import InputError
from paraamr.reported import RESULTS_DIR, blocks_in, load_reported, render_text

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_results_block_equals_its_file():
    stale = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if render_text(text) != text:
            stale.append(str(page.relative_to(ROOT)))
    assert not stale, f"{stale}: run make results-docs (a number differs from its results file)"


def test_every_results_file_is_signed_and_shown():
    files = sorted(RESULTS_DIR.glob("*.json"))
    shown = {name for p in PAGES for name, _ in blocks_in(p.read_text(encoding="utf-8"))}
    for f in files:
        load_reported(f.stem)  # date, machine, command, a table: or a one-line error
    assert {f.stem for f in files} <= shown, "a results file no page shows"


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_no_results_file_is_ignored_by_git():
    """A clean clone has every results file the pages show (an ignore rule once hid them all)."""
    files = [str(f.relative_to(ROOT)) for f in sorted(RESULTS_DIR.glob("*.json"))]
    done = subprocess.run(["git", "check-ignore", *files], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.split() == [], f"git ignores {done.stdout.split()}: fix .gitignore"


def test_a_number_changed_by_hand_is_caught(tmp_path):
    data = {"title": "T", "date": "2026-12-07", "machine": "2-core CPU", "command": "make x",
            "columns": ["row", "value"], "rows": [["A", "61.20"]]}  # fmt: skip
    (tmp_path / "t.json").write_text(json.dumps(data))
    page = "intro\n<!-- results:t -->\nold\n<!-- /results:t -->\nend\n"
    good = render_text(page, tmp_path)
    assert "| A | 61.20 |" in good and render_text(good, tmp_path) == good
    edited = good.replace("61.20", "62.20")
    assert render_text(edited, tmp_path) != edited


@pytest.mark.parametrize("drop", ["date", "machine", "command"])
def test_a_file_without_its_date_machine_or_command_is_refused(tmp_path, drop):
    data = {"title": "T", "date": "2026-12-07", "machine": "m", "command": "c",
            "columns": ["a"], "rows": [["1"]]}  # fmt: skip
    del data[drop]
    (tmp_path / "t.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=f"results file t: no {drop}"):
        load_reported("t", tmp_path)


def test_a_summary_block_has_one_row_per_file_with_its_date_and_machine(tmp_path):
    for name, value in (("a", "61.20"), ("b", "3.17")):
        data = {"experiment": f"exp {name}", "summary": f"value {value}", "page": f"{name}.md",
                "title": "T", "date": "2026-12-07", "machine": f"machine {name}",
                "command": "c", "columns": ["x"], "rows": [["1"]]}  # fmt: skip
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    page = "<!-- summary:a,b -->\n<!-- /summary -->\n"
    lines = render_text(page, tmp_path).splitlines()
    assert lines[3] == "| [exp a](a.md) | value 61.20 | 2026-12-07, machine a |"
    assert lines[4] == "| [exp b](b.md) | value 3.17 | 2026-12-07, machine b |"
    edited = render_text(page, tmp_path).replace("3.17", "3.71")
    assert render_text(edited, tmp_path) != edited
    del data["summary"]
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="results file b: no summary"):
        render_text(page, tmp_path)
