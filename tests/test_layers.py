"""The package's layering, checked on the source: lower layers never import higher ones.

Layers, bottom up: the foundations (errors, utils, signature, data, shards, tracking, paper),
the library (corpus, metrics, parsers, amr, training, and the stage packages builder, simcse,
sts, top and those that follow), then the paper-table orchestration (``paraamr.tables``), then the
entry points (``paraamr.cli``, ``experiments/``, ``analysis/``). A stage package's own config
runners (``run.py``, ``__main__.py``, ``demo.py``) may write tables; nothing else below
``paraamr.tables`` may import it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "paraamr"
FOUNDATION = {"errors", "utils", "signature", "data", "shards", "tracking", "paper"}
CORE = {"corpus", "metrics", "parsers", "amr"}
RUNNERS = {"run.py", "__main__.py", "demo.py"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {
        m for m in out if m == "paraamr" or m.startswith(("paraamr.", "experiments", "analysis"))
    }


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "paraamr" and len(parts) > 1 else parts[0]


def _modules():
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG)
        yield rel, (rel.parts[0].removesuffix(".py"))


@pytest.mark.parametrize(("rel", "layer"), list(_modules()), ids=lambda x: str(x))
def test_no_module_imports_a_higher_layer(rel, layer):
    imports = {_top(m) for m in _imports(PKG / rel)}
    if layer in FOUNDATION:
        allowed = FOUNDATION | {"paraamr"}
    elif layer in CORE:
        allowed = FOUNDATION | CORE | {"paraamr"}
    elif layer in ("tables", "cli"):
        return  # orchestration and entry points may import anything in the package
    elif rel.name in RUNNERS:
        return
    else:  # a stage package or training: anything but orchestration and entry points
        allowed = None
    forbidden = {"tables", "cli", "experiments", "analysis"}
    bad = imports & forbidden if allowed is None else imports - allowed
    assert not bad, f"paraamr/{rel} ({layer}) imports {sorted(bad)}"


@pytest.mark.parametrize(("rel", "layer"), list(_modules()), ids=lambda x: str(x))
def test_every_paraamr_import_resolves(rel, layer):
    """Lazy imports inside functions too (a moved module would otherwise fail only at run time)."""
    import importlib.util

    for module in _imports(PKG / rel):
        if module.startswith("paraamr"):
            assert importlib.util.find_spec(module) is not None, f"paraamr/{rel}: {module}"
