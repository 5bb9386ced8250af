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


def _shell_lines(text: str) -> list[str]:
    """Commands of fenced code blocks, ``\\`` continuations joined, plus inline code spans."""
    out, fenced, cur = [], False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, cur = not fenced, ""
            continue
        if fenced:
            cur += line.strip()
            if cur.endswith("\\"):
                cur = cur[:-1] + " "
                continue
            out.append(cur)
            cur = ""
    out += re.findall(r"`([^`\n]+)`", text)
    return out


def _words(cmd: str, start: str) -> list[str] | None:
    """The arguments after ``start`` (``paraamr``, ``experiments/x.py``) up to a redirection,
    pipe or comment; ``None`` when the command is not one of these or is not plain shell."""
    import shlex

    m = re.search(rf"(?:^|[;&|(]\s*|/|python\s+){re.escape(start)}\s", cmd + " ")
    if not m or "..." in cmd or "…" in cmd:
        return None
    try:
        words = shlex.split(cmd[m.end() :], comments=True)
    except ValueError:
        return None
    out = []
    for w in words:
        if w in ("|", "<", ">", ";", "&&", "||") or w.startswith((">", "<", "2>")):
            break
        out.append(w)
    return out


def test_named_paraamr_options_exist():
    """Every ``paraamr <command> --option ...`` line of the docs parses with the real parser."""
    from paraamr.cli import build_parser

    bad, seen = [], 0
    for doc, text in _text():
        for cmd in _shell_lines(text):
            args = _words(cmd, "paraamr")
            if not args or len(args) < 2 or args[0] == "top" or not re.match(r"[a-z]", args[0]):
                continue  # a bare command name is checked by test_named_paraamr_commands_exist
            seen += 1
            try:
                build_parser().parse_args(args)
            except SystemExit:
                bad.append(f"{doc.name}: paraamr {' '.join(args)}")
    assert seen >= 10 and not bad, bad


def test_named_experiment_lines_compose():
    """Every ``python experiments/<entry>.py overrides...`` line of the docs composes (the
    Hydra overrides exist; launcher and sweep settings aside)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from paraamr.presets import ENTRY_SCRIPTS

    config_of = {Path(v).name: k for k, v in ENTRY_SCRIPTS.items()}
    bad, seen = [], 0
    for doc, text in _text():
        for cmd in _shell_lines(text):
            for script, name in config_of.items():
                args = _words(cmd, f"experiments/{script}")
                if args is None:
                    continue
                overrides = [
                    a for a in args
                    if a not in ("-m", "--multirun") and not a.startswith(("hydra", "--"))
                    and "$" not in a and "<" not in a
                ]  # fmt: skip
                # a sweep composes as its first value: a=1,2 -> a=1; a=range(0,64) -> a=0
                overrides = [re.sub(r"=range\((\d+),.*\)$", r"=\1", o) for o in overrides]
                overrides = [re.sub(r"^([^=]+=)([^,\[{'\"(]+),.*$", r"\1\2", o) for o in overrides]
                seen += 1
                try:
                    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
                        compose(name, overrides=overrides)
                except (HydraException, OmegaConfBaseException, ValueError) as e:
                    bad.append(f"{doc.name}: {script} {' '.join(overrides)}: {str(e)[:120]}")
    assert seen >= 10 and not bad, bad


def test_python_examples_import_what_exists():
    """Every ``from paraamr... import a, b`` in a python block of the README or the docs names
    a module that exists and names it has (a moved function breaks the example)."""
    import ast
    import importlib

    seen = 0
    for path, text in _text():
        for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
            for node in ast.walk(ast.parse(block)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("paraamr"):
                    mod = importlib.import_module(node.module)
                    for alias in node.names:
                        assert hasattr(mod, alias.name), f"{path.name}: {node.module}.{alias.name}"
                        seen += 1
    assert seen >= 5
