"""Docs that cannot rot: every command, test, target and path the README names exists.

- ``tests/<file>.py::<name>``: the file defines that test (parametrised ids allowed);
- ``make <target>``: the Makefile defines the target;
- ``experiments/<x>.py``, ``benchmarks/<x>.py``, ``analysis/<x>.py``, ``conf/...``,
  ``paraamr/...`` paths: they exist;
- ``paraamr <command>``: the command line has that subcommand.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _text() -> list[tuple[Path, str]]:
    return [(p, p.read_text(encoding="utf-8")) for p in DOCS if p.exists()]


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
    }


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z0-9_.-]+):", text, flags=re.M))


def test_named_tests_exist():
    bad = []
    for doc, text in _text():
        for file, name in re.findall(r"(tests/[\w/]+\.py)::(\w+)", text):
            path = ROOT / file
            if not path.exists() or name not in _tests_in(path):
                bad.append(f"{doc.name}: {file}::{name}")
    assert not bad, bad


def _commands(text: str) -> list[str]:
    """Shell lines of fenced code blocks and inline code spans (where commands are named)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            out.append(line.strip())
    out += re.findall(
        r"`([^`\n]+)`",
        "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("```")),
    )
    return out


def test_named_make_targets_exist():
    targets = _make_targets()
    bad = []
    for doc, text in _text():
        for cmd in _commands(text):
            for m in re.finditer(r"(?:^|[;&|(]\s*)make ((?:[a-z][\w.-]*(?:\s+|$))+)", cmd):
                for t in m.group(1).split():
                    if t not in targets:
                        bad.append(f"{doc.name}: make {t}")
    assert not bad, sorted(set(bad))


def test_named_repo_paths_exist():
    bad = []
    pattern = r"(?<![\w/.$])((?:experiments|benchmarks|analysis|conf|paraamr|tests)/[\w/.-]*\w)"
    for doc, text in _text():
        for m in re.finditer(pattern, text):
            path = m.group(1)
            if text[m.end() : m.end() + 1] in ("{", "*", "<"):  # a pattern, not a path
                continue
            if not (ROOT / path).exists() and not (ROOT / (path + ".py")).exists():
                bad.append(f"{doc.name}: {path}")
    assert not bad, sorted(set(bad))


def test_named_paraamr_commands_exist():
    from paraamr.cli import main

    bad = []
    for doc, text in _text():
        named = {m for c in _commands(text) for m in re.findall(r"(?:^|/)paraamr ([a-z][\w-]*)", c)}
        for cmd in named:
            if cmd in ("top",):  # its own parser: checked below
                continue
            try:
                main([cmd, "--help"])
            except SystemExit as e:
                if e.code != 0:
                    bad.append(f"{doc.name}: paraamr {cmd}")
    assert not bad, bad


@pytest.mark.parametrize("cmd", ["stats", "parse"])
def test_top_commands_exist(cmd):
    from paraamr.top.__main__ import main

    with pytest.raises(SystemExit) as e:
        main([cmd, "--help"])
    assert e.value.code == 0


def test_every_docs_page_is_in_the_site_nav_and_every_link_resolves():
    """mkdocs.yml's nav lists every page of docs/ (none orphaned, none missing), and every
    relative markdown link in the README and the pages points to a file that exists."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(entry) -> list[str]:
        if isinstance(entry, str):
            return [entry]
        if isinstance(entry, list):
            return [p for e in entry for p in pages(e)]
        return [p for v in entry.values() for p in pages(v)]

    listed = pages(nav)
    on_disk = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(listed) == on_disk
    for path, text in _text():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (path.parent / target).exists(), f"{path.name}: broken link {target}"
