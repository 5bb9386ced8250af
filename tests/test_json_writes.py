"""Job results, summaries and benchmark figures are written with ``write_json_atomic`` (a job
killed while writing leaves its previous file or none, never half a JSON), or, where a file
keeps bytes of its own (tables, the STS and validity reports), with ``write_text_atomic`` of
their JSON text: a rule over the library's source, with the few other JSON writes named and
why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "paraamr"
# a plain write of JSON text to a path: path.write_text(json.dumps(...))
PLAIN = re.compile(r"\.write_text\(\s*json\.dumps\(")
ALLOWED = {
    "lms/smollm2.py": "a cache marker inside a temporary folder that is renamed whole",
    "testing/tiny_models.py": "tiny-model fixtures written once into a fresh folder",
}


def plain_json_writes(root: Path) -> dict[str, int]:
    """Files under ``root`` with plain JSON writes (path relative to ``root``: count)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        n = len(PLAIN.findall(path.read_text(encoding="utf-8")))
        if n:
            out[path.relative_to(root).as_posix()] = n
    return out


def test_results_are_written_atomically():
    found = plain_json_writes(LIB)
    stray = sorted(set(found) - set(ALLOWED))
    assert not stray, f"use paraamr.utils.write_json_atomic in {stray} (or name the reason here)"
    assert not set(ALLOWED) - set(found), "an allowed file no longer writes plain JSON: drop it"


@pytest.mark.parametrize(
    "text, n",
    [('(out / "r.json").write_text(json.dumps(r, indent=2))', 1),
     ("p.write_text(\n    json.dumps(x))", 1), ("write_json_atomic(p, r)", 0),
     ('p.write_text("".join(json.dumps(r) + "\\n" for r in rows))', 0)],
)  # fmt: skip
def test_the_rule_sees_plain_writes(tmp_path, text, n):
    (tmp_path / "m.py").write_text(text + "\n", encoding="utf-8")
    assert sum(plain_json_writes(tmp_path).values()) == n
