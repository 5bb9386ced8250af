"""Every ``paraamr`` name the entry points import resolves, including imports inside functions
(which only run when a benchmark or analysis command is called: a moved module would otherwise
surface the first time someone runs ``make ted-presets``)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p for d in ("benchmarks", "experiments", "analysis") for p in (ROOT / d).glob("*.py")
)


def _paraamr_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("paraamr"):
            out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("paraamr")]
    return out


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_paraamr_imports_resolve(path):
    missing = []
    for line, module, names in _paraamr_imports(path):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            missing.append(f"{path.name}:{line}: {e}")
            continue
        missing += [f"{path.name}:{line}: {module}.{n}" for n in names if not hasattr(mod, n)]
    assert not missing


def test_the_scan_sees_function_level_imports():
    found = _paraamr_imports(ROOT / "benchmarks" / "ted_presets.py")
    assert ("paraamr.tables.table2" in {m for _, m, _ in found}) and len(SCRIPTS) > 10
