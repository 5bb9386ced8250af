"""The package's layering, checked on the source: lower layers never import higher ones.

Layers, bottom up: the foundations (errors, utils, precision, signature, datadir, shards, results,
tracking, paper, figures, markdown, jsonl_cache), the library (corpus, metrics, parsers, amr,
training, and the stage packages builder, simcse, sts, top and those that follow), then the
paper-table orchestration (``paraamr.tables``, and ``paraamr.compare``, which runs the tables'
jobs and Table 2 for several corpora), then the entry points (``paraamr.cli``,
``experiments/``, ``analysis/``). Nothing below ``paraamr.tables`` imports it: a stage that
ends in a paper table (the builder's Table 1) returns its numbers, and the table layer or the
entry point writes the table. No two modules import each other, directly or through others
(imports inside functions count).

Within the library, the stage packages (:data:`STAGES`: each a pipeline of the paper's) share
machinery only through the shared layers (:data:`SHARED`: training, the language-model layer,
STS evaluation, diversity, the packaged fakes); a stage imports another stage only where it is
a declared consumer of it (:data:`CONSUMERS`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "paraamr"
FOUNDATION = {"errors", "utils", "precision", "signature", "lockfile", "datadir", "shards",
              "results", "tracking", "paper", "figures", "markdown", "jsonl_cache",
              "reported"}  # fmt: skip
CORE = {"corpus", "metrics", "parsers", "amr"}
#: what every stage may build on beside the core
SHARED = {"training", "lms", "sts", "diversity", "testing"}
#: the stage packages: none imports another's modules but as a declared consumer
STAGES = {"amrlm", "builder", "fewshot", "humaneval", "scpn", "simcse", "top", "validity"}
#: (consumer, stage it uses): why
CONSUMERS = {
    ("builder", "amrlm"): "builds corpora with the AMR models trained by amrlm",
    ("fewshot", "scpn"): "augments few-shot training data with SCPN's paraphraser",
    ("builder", "validity"): "filters at the acceptable similarity, calibrated on the judgements",
}
ORCHESTRATION = {"tables", "compare", "cli", "presets"}


#: calls that import a module by name (``importlib.import_module``, ``__import__``)
DYNAMIC = {"import_module", "__import__"}
#: the modules that import by a computed name, and what they import that way (never paraamr)
COMPUTED_IMPORTS = {
    "metrics/semantic.py": "a packaged model's own package (``package:<name>`` of MODELS)",
    "utils.py": "an optional third-party package, by require()",
}


def _dynamic_calls(tree: ast.AST) -> list[ast.Call]:
    def name(f: ast.expr) -> str:
        return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")

    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and name(n.func) in DYNAMIC]


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports: import statements anywhere (inside functions too) and
    ``importlib.import_module("literal")`` calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    for call in _dynamic_calls(tree):
        arg = call.args[0] if call.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.add(arg.value)
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
    elif layer in ("tables", "compare", "cli"):
        return  # orchestration and entry points may import anything in the package
    else:  # a stage package or training: anything but orchestration and entry points
        allowed = None
    forbidden = {"tables", "cli", "experiments", "analysis"}
    bad = imports & forbidden if allowed is None else imports - allowed
    assert not bad, f"paraamr/{rel} ({layer}) imports {sorted(bad)}"


def test_every_package_has_a_layer():
    """A new package is placed in a layer here before the checks above and below can hold."""
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    placed = FOUNDATION | CORE | SHARED | STAGES | ORCHESTRATION
    assert packages <= placed, f"packages in no layer: {sorted(packages - placed)}"


def stage_imports(imports: dict[str, set[str]]) -> list[str]:
    """``"consumer -> stage"`` for every stage package's import of another stage package that
    is not a declared consumer (``imports``: a module path -> the modules it imports).

    >>> stage_imports({"amrlm/module.py": {"paraamr.top.module", "paraamr.training.seq2seq"},
    ...                "fewshot/augment.py": {"paraamr.scpn.paraphrase"}})
    ['amrlm/module.py: amrlm -> top (paraamr.top.module)']
    """
    bad = []
    for rel, mods in sorted(imports.items()):
        layer = rel.split("/")[0].removesuffix(".py")
        if layer not in STAGES:
            continue
        for m in sorted(mods):
            other = _top(m)
            if other in STAGES and other != layer and (layer, other) not in CONSUMERS:
                bad.append(f"{rel}: {layer} -> {other} ({m})")
    return bad


def test_no_stage_imports_another_stage_but_a_declared_consumer():
    """Shared generation and training machinery lives in the shared layers, not in the stage
    that needed it first: the AMR models once took their module, data module and trainer from
    top/ and their no-repeat rule from scpn/."""
    imports = {str(rel): _imports(PKG / rel) for rel, _ in _modules()}
    assert stage_imports(imports) == []


def test_no_shared_layer_imports_a_stage():
    """The shared layers sit below every stage: a stage's module imported there would make the
    other stages depend on it."""
    bad = [
        f"paraamr/{rel}: {m}"
        for rel, _ in _modules()
        if rel.parts[0] in SHARED
        for m in sorted(_imports(PKG / rel))
        if _top(m) in STAGES
    ]
    assert bad == []


@pytest.mark.parametrize(("rel", "layer"), list(_modules()), ids=lambda x: str(x))
def test_no_module_imports_by_a_name_this_test_cannot_read(rel, layer):
    """An import by a computed name would be an arrow the layer and cycle checks cannot see."""
    calls = _dynamic_calls(ast.parse((PKG / rel).read_text(encoding="utf-8")))
    computed = [c for c in calls if not (c.args and isinstance(c.args[0], ast.Constant))]
    if computed:
        assert str(rel) in COMPUTED_IMPORTS, (
            f"paraamr/{rel}:{computed[0].lineno} imports a module by a computed name: import "
            "it by name (or list the module in COMPUTED_IMPORTS with what it imports)"
        )


def test_dynamic_imports_are_seen(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import importlib\ndef f():\n    importlib.import_module('paraamr.tables')\n")
    assert "paraamr.tables" in _imports(p)


@pytest.mark.parametrize(("rel", "layer"), list(_modules()), ids=lambda x: str(x))
def test_every_paraamr_import_resolves(rel, layer):
    """Lazy imports inside functions too (a moved module would otherwise fail only at run time)."""
    import importlib.util

    for module in _imports(PKG / rel):
        if module.startswith("paraamr"):
            assert importlib.util.find_spec(module) is not None, f"paraamr/{rel}: {module}"


def _module_name(rel: Path) -> str:
    parts = ("paraamr", *rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from pkg import sub`` names ``pkg.sub``)."""
    names = {_module_name(p.relative_to(PKG)): p for p in PKG.rglob("*.py")}
    graph = {}
    for name, path in names.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                edges |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
            elif isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
        edges |= _imports(path)  # importlib.import_module("literal") too
        graph[name] = {m for m in edges if m in names and m != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan).

    >>> import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert import_cycles(_import_graph()) == []


TESTKIT = PKG.parent / "tests" / "testkit"


def test_no_library_module_imports_a_test_helper():
    """Helpers only tests use live in tests/testkit, imported there by module name: the library
    must never import one (it would work under pytest and fail for users)."""
    helpers = {p.stem for p in TESTKIT.glob("*.py")}
    assert helpers, TESTKIT
    for rel, _ in _modules():
        tree = ast.parse((PKG / rel).read_text(encoding="utf-8"))
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}  # fmt: skip
        names |= {n.module.split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}  # fmt: skip
        assert not names & helpers, f"paraamr/{rel} imports the test helper {names & helpers}"


def test_paraamr_testing_holds_only_what_users_run():
    """A module stays in paraamr.testing only while something outside the tests names it: the
    library, the Makefile, a benchmark or the handbook (tiny models for make tiny-models and
    build-demo, the demo's rule-based generator, the fault injector run as python -m)."""
    root = PKG.parent
    texts = [(root / "Makefile").read_text(encoding="utf-8")]
    for folder, pattern in (("paraamr", "*.py"), ("benchmarks", "*.py"), ("docs", "*.md")):
        texts += [p.read_text(encoding="utf-8") for p in (root / folder).rglob(pattern)
                  if "testing" not in p.relative_to(root).parts]  # fmt: skip
    text = "\n".join(texts)
    for p in sorted((PKG / "testing").glob("*.py")):
        if p.stem != "__init__":
            assert f"paraamr.testing.{p.stem}" in text, (
                f"paraamr/testing/{p.name} is named only by tests: move it to tests/testkit/"
            )
