"""Docs that cannot rot: every command, test, target and path the README names exists.

- ``tests/<file>.py::<name>``: the file defines that test (parametrised ids allowed);
- ``make <target> VAR=value ...``: the line runs dry (``make -n``), and what it would run
  holds up: its ``python -m`` modules import, its ``paraamr`` subcommands exist, its
  ``experiments/<x>.py`` overrides compose;
- ``python -m <module> [<command>]`` (docs, Makefile recipes, ``conf/`` comments): the module
  imports and has that command;
- Hydra overrides (after ``experiments/<x>.py``, in ``ARGS=`` of a ``make`` line, or alone in an
  inline code span, placeholders such as ``+experiment=<table>_paper`` expanded): they compose;
- ``experiments/<x>.py``, ``benchmarks/<x>.py``, ``analysis/<x>.py``, ``conf/...``,
  ``paraamr/...`` paths: they exist;
- ``paraamr <command>`` (docs, ``conf/`` comments, Makefile recipes): the command line has that
  subcommand.
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CONF_FILES = sorted((ROOT / "conf").rglob("*.yaml"))


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


def _make_lines(text: str) -> list[list[str]]:
    """The words after ``make`` of every ``make ...`` command the text names (fenced blocks with
    ``\\`` continuations joined, and inline code spans), up to ``&&``, ``;``, a pipe or a
    comment: targets (globs such as ``bench-*`` allowed), ``VAR=value`` and options."""
    out = []
    for cmd in _shell_lines(text):
        for m in re.finditer(r"(?:^|[;&|(]\s*)make\s", cmd):
            try:
                words = shlex.split(cmd[m.end() :], comments=True)
            except ValueError:
                continue
            args = []
            for w in words:
                if w in ("&&", "||", ";", "|") or w.startswith((">", "<", "2>")):
                    break
                args.append(w if _is_make_var(w) else w.rstrip("),.;:"))  # prose: "(make x),"
            if args and any(not _is_make_var(a) and not a.startswith("-") for a in args):
                out.append(args)
    return out


def _is_make_var(word: str) -> bool:
    return re.match(r"[A-Z_][A-Z0-9_]*=", word) is not None


def _make_goals(args: list[str]) -> list[str]:
    """The targets of a ``make`` line, globs expanded against the Makefile's targets."""
    import fnmatch

    goals = []
    for a in args:
        if _is_make_var(a) or a.startswith("-"):
            continue
        goals += (
            sorted(t for t in _make_targets() if fnmatch.fnmatchcase(t, a)) if "*" in a else [a]
        )
    return goals


@functools.cache
def _dry_run(args: tuple[str, ...]) -> tuple[int, str]:
    """``make -n ARGS`` in the project root: exit status and what it prints (stdout + stderr)."""
    r = subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return r.returncode, r.stdout + r.stderr


def _doc_make_runs() -> list[tuple[str, list[str], int, str]]:
    """``(doc, make words, exit status, dry-run output)`` of every ``make`` line of the docs."""
    runs = []
    for doc, text in _text():
        for args in _make_lines(text):
            goals = _make_goals(args)
            if not goals:  # a glob that matches no target
                runs.append((doc.name, args, 2, f"no target matches {args}"))
                continue
            variables = [a for a in args if _is_make_var(a)]
            # the set-up recipe runs dry with the lines that name `make setup`; elsewhere the
            # venv counts as made (its recipe asks Python for its version at every expansion)
            done = [] if "setup" in goals else ["-o", ".venv/.installed"]
            rc, out = _dry_run(tuple([*done, *variables, *goals]))
            runs.append((doc.name, args, rc, out))
    return runs


def test_named_make_lines_dry_run():
    """Every ``make`` line of the README and the docs, with the variables it gives, runs dry:
    its targets exist and its recipes expand (``make -n``); what the recipes would run is
    checked by the module, subcommand and composition tests below."""
    targets = _make_targets()
    runs = _doc_make_runs()
    bad = [f"{doc}: make {' '.join(args)}: {out.strip()[-200:]}" for doc, args, rc, out in runs
           if rc != 0]  # fmt: skip
    for doc, text in _text():
        for args in _make_lines(text):
            bad += [f"{doc.name}: make {t}" for t in _make_goals(args) if t not in targets]
    assert len(runs) >= 20 and not bad, sorted(set(bad))


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


def _joined(lines) -> list[str]:
    """Lines with ``\\`` continuations joined."""
    out, cur = [], ""
    for line in lines:
        cur += line.strip()
        if cur.endswith("\\"):
            cur = cur[:-1] + " "
            continue
        out.append(cur)
        cur = ""
    return out + ([cur] if cur else [])


def _recipe_lines() -> list[str]:
    """The Makefile's recipe lines, ``$(PY)`` / ``$(PYTHON)`` written as ``python``."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    lines = _joined(ln for ln in text.splitlines() if ln.startswith("\t"))
    return [re.sub(r"\$\((?:PY|PYTHON)\)", "python", ln) for ln in lines]


def _conf_lines() -> list[tuple[str, str]]:
    """``(file, command)`` of the commands in the comments of ``conf/``."""
    out = []
    for p in CONF_FILES:
        comments = [ln.split("#", 1)[1] for ln in p.read_text(encoding="utf-8").splitlines()
                    if "#" in ln]  # fmt: skip
        out += [(p.relative_to(ROOT).as_posix(), c) for c in _joined(comments)]
    return out


def _command_sources() -> list[tuple[str, str]]:
    """``(where, command line)``: the docs' shell lines, the Makefile's recipes, the comments of
    ``conf/`` and what the docs' ``make`` lines would run (``make -n``)."""
    out = [(doc.name, c) for doc, text in _text() for c in _shell_lines(text)]
    out += [("Makefile", c) for c in _recipe_lines()]
    out += _conf_lines()
    for doc, args, rc, printed in _doc_make_runs():
        if rc == 0:
            out += [(f"{doc}: make {' '.join(args)}", ln) for ln in printed.splitlines()]
    return out


def _python_modules(cmd: str) -> list[tuple[str, str | None]]:
    """``(module, first word or None)`` of every ``python -m module [word]`` in a command."""
    pattern = (
        r"(?:^|[\s;&|(])(?:\S*/)?python[\d.]*\s+-m\s+([A-Za-z_][\w.]*)(?:\s+([a-z][\w-]*)(?=\s|$))?"
    )
    return [(m.group(1), m.group(2)) for m in re.finditer(pattern, cmd)]


def _module_problem(module: str, word: str | None) -> str | None:
    """Why ``python -m module word`` cannot run (``None``: it can): the module (a package: its
    ``__main__``) must import, and a ``paraamr`` module's ``main`` must take ``word`` (its
    subcommand or first argument) with ``--help``."""
    import importlib
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    if spec is None:
        return f"No module named {module}"
    runs = module
    if spec.submodule_search_locations is not None:
        runs = f"{module}.__main__"
        if importlib.util.find_spec(runs) is None:
            return f"{module} is a package without __main__"
    if word is None or not module.startswith("paraamr"):
        return None
    main = getattr(importlib.import_module(runs), "main", None)
    if main is None:
        return None
    try:
        main([word, "--help"])
    except SystemExit as e:
        if e.code not in (0, None):
            return f"{module} has no command {word!r}"
    return None


def test_named_python_modules_exist(capsys):
    """Every ``python -m <module> [<command>]`` of the docs, the Makefile's recipes, the comments
    of ``conf/`` and what the docs' ``make`` lines would run names a module that imports (a
    package: with ``__main__``) and, for the project's modules, a command it has."""
    bad, seen = [], set()
    for where, cmd in _command_sources():
        for module, word in _python_modules(cmd):
            seen.add(module)
            problem = _module_problem(module, word)
            if problem:
                bad.append(f"{where}: python -m {module}{' ' + word if word else ''}: {problem}")
    capsys.readouterr()  # the --help texts
    assert len(seen) >= 8 and not bad, sorted(set(bad))


def test_the_no_data_error_names_commands_that_run(tmp_path, capsys):
    """The error of Table 2 without data names ``make data`` and ``python -m paraamr.datadir``:
    the make line runs dry and every module it (or the message) names imports."""
    from paraamr.errors import DataNotFoundError
    from paraamr.tables.table2 import default_corpora

    with pytest.raises(DataNotFoundError) as info:
        default_corpora(tmp_path)
    message = str(info.value)
    lines = [message, *re.findall(r"`([^`]+)`", message)]
    makes = [a for ln in re.findall(r"`([^`]+)`", message) for a in _make_lines(f"`{ln}`")]
    assert ["data"] in makes, message
    bad = []
    for args in makes:
        rc, printed = _dry_run(("-o", ".venv/.installed", *args))
        assert rc == 0, printed
        lines += printed.splitlines()
    named = [m for ln in lines for m in _python_modules(ln)]
    bad = [f"python -m {m}: {p}" for m, w in named if (p := _module_problem(m, w))]
    capsys.readouterr()
    assert ("paraamr.datadir", None) in named and not bad, bad


def test_named_paraamr_commands_exist(capsys):
    """Every ``paraamr <command>`` of the docs, the Makefile's recipes and the comments of
    ``conf/`` is a subcommand of the command line."""
    from paraamr.cli import main

    sources = [(doc.name, c) for doc, text in _text() for c in _commands(text)]
    sources += [("Makefile", c) for c in _recipe_lines()] + _conf_lines()
    named: dict[str, set[str]] = {}
    for where, c in sources:
        for cmd in re.findall(r"(?:^|/|[;&|(]\s*|^\s*\$?\s*)paraamr ([a-z][\w-]*)", c.strip()):
            named.setdefault(cmd, set()).add(where)
    bad = []
    for cmd, where in sorted(named.items()):
        if cmd in ("top",):  # its own parser: checked below
            continue
        try:
            main([cmd, "--help"])
        except SystemExit as e:
            if e.code != 0:
                bad += [f"{w}: paraamr {cmd}" for w in sorted(where)]
    capsys.readouterr()
    assert len(named) >= 5 and not bad, bad


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
    """Commands of fenced code blocks, ``\\`` continuations joined, the body of a
    ``for x in a b; do ... done`` loop once per value, plus inline code spans."""
    out, fenced, cur, loop = [], False, "", None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, cur, loop = not fenced, "", None
            continue
        if fenced:
            cur += line.strip()
            if cur.endswith("\\"):
                cur = cur[:-1] + " "
                continue
            m = re.fullmatch(r"for (\w+) in ([^;]+); do", cur)
            if m:
                loop = (m.group(1), m.group(2).split())
            elif loop and re.match(r"done\b", cur):
                loop = None
            elif loop:
                var, values = loop
                out += [re.sub(rf"\$\{{?{var}\b\}}?", v, cur) for v in values]
            else:
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
        if w.endswith(";"):  # `x=1; fi`: the shell ends the command at the `;`
            out.append(w[:-1])
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


def _sweep_first(overrides: list[str]) -> list[str]:
    """The overrides a Hydra line composes with: launcher, sweep and shell words aside, a sweep
    as its first value (``a=1,2`` -> ``a=1``; ``a=range(0,64)`` -> ``a=0``)."""
    out = [
        a for a in overrides
        if a not in ("-m", "--multirun") and not a.startswith(("hydra", "--")) and "$" not in a
    ]  # fmt: skip
    out = [re.sub(r"=range\((\d+),.*\)$", r"=\1", o) for o in out]
    return [re.sub(r"^([^=]+=)([^,\[{'\"(]+),.*$", r"\1\2", o) for o in out]


#: a Hydra override alone in an inline code span: ``key=value``, ``+key=value``, ``group=option``
_OVERRIDE = re.compile(r"(?:\+{1,2})?[a-z_][\w.]*(?:/[\w.]+)*=[^\s=]\S*|(?:\+{1,2})?[a-z_][\w.]*=")


def _override_spans(text: str) -> list[list[str]]:
    """Inline code spans that are Hydra overrides and nothing else (``data.identity=false``,
    ``trainer.max_steps=800 resume=...``, ``ARGS=+experiment=x``), each as its override list.
    Python keyword arguments (``identity=True``) and settings of other tools are not."""
    out = []
    for span in re.findall(r"`([^`\n]+)`", text):
        span = span.strip()
        m = re.fullmatch(r"ARGS=(['\"]?)(.*)\1", span)
        tokens = (m.group(2) if m else span).split()
        if not tokens or not all(_OVERRIDE.fullmatch(t) for t in tokens):
            continue
        if any(re.search(r"=(True|False|None)$", t) for t in tokens):
            continue
        out.append(tokens)
    return out


def _paragraphs(text: str) -> list[str]:
    """Paragraphs and list items outside fenced blocks."""
    out, cur, fenced = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("\n".join(cur))
            cur = []
            continue
        if fenced:
            continue
        if not line.strip() or re.match(r"\s*(?:[-*]|\d+\.)\s", line):
            out.append("\n".join(cur))
            cur = []
        if line.strip():
            cur.append(line)
    return [p for p in [*out, "\n".join(cur)] if p.strip()]


def _placeholder_values(text: str, name: str) -> list[str]:
    """What ``<name>`` stands for in a page: the values it lists ("`<table>` is `table2`,
    `table5` or `table6`"), else for ``<table>`` every ``make table<N>`` the page names."""
    m = re.search(
        rf"`<{name}>`(?:\s+is|\s+one of|:)\s+((?:`[^`\n]+`(?:,?\s+(?:or|and)\s+|,\s*)?)+)", text
    )
    if m:
        return re.findall(r"`([^`]+)`", m.group(1))
    if name == "table":
        return sorted(
            {t for a in _make_lines(text) for t in _make_goals(a) if re.fullmatch(r"table\d+", t)}
        )
    return []


def _expand(overrides: list[str], text: str) -> list[list[str]]:
    """One override list per value of a placeholder of ``+experiment=`` (``<table>_paper`` ->
    ``table2_paper``, ...); other words with a placeholder are left out."""
    sets = [[]]
    for o in overrides:
        m = re.fullmatch(r"(\+{0,2}experiment=)(.*)<(\w+)>(.*)", o)
        if m:
            values = _placeholder_values(text, m.group(3)) or [f"<{m.group(3)}>"]
            sets = [[*s, f"{m.group(1)}{m.group(2)}{v}{m.group(4)}"] for s in sets for v in values]
        elif "<" not in o:
            sets = [[*s, o] for s in sets]
    return sets


def _preset_configs(overrides: list[str]) -> list[str] | None:
    """The configs a ``+experiment=`` preset of ``overrides`` is for (``None``: no preset)."""
    import yaml

    for o in overrides:
        m = re.fullmatch(r"\+{0,2}experiment=(.+)", o)
        if m:
            p = ROOT / "conf" / "experiment" / f"{m.group(1)}.yaml"
            declared = (
                yaml.safe_load(p.read_text(encoding="utf-8")).get("preset_for")
                if p.exists()
                else None
            )
            return [declared] if isinstance(declared, str) else list(declared or [])
    return None


@functools.cache
def _composed(name: str, overrides: tuple[str, ...]):
    """``(config, None)``, or ``(None, why not)`` when ``overrides`` do not compose with config
    ``name`` or a preset among them is not one for ``name``."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from paraamr.errors import ConfigError
    from paraamr.presets import check_preset

    for o in overrides:
        m = re.fullmatch(r"\+{0,2}experiment=(.+)", o)
        if m and not (ROOT / "conf" / "experiment" / f"{m.group(1)}.yaml").exists():
            return None, f"no preset conf/experiment/{m.group(1)}.yaml"
    try:
        with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
            cfg = compose(name, overrides=list(overrides))
        check_preset(cfg, name)
    except (HydraException, OmegaConfBaseException, ValueError, ConfigError) as e:
        return None, str(e).splitlines()[0][:160]
    return cfg, None


def _compose_problem(name: str, overrides: tuple[str, ...]) -> str | None:
    return _composed(name, overrides)[1]


@functools.cache
def _top_keys() -> dict[str, frozenset[str]]:
    """Config name -> its top-level keys (config groups included), every entry point."""
    from hydra import compose, initialize_config_dir

    from paraamr.presets import ENTRY_SCRIPTS

    extra = {"build": ["input=x.txt"], "table5": ["data.path=x"], "table6": ["data.path=x"]}
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return {n: frozenset(compose(n, overrides=extra.get(n, []))) for n in ENTRY_SCRIPTS}


def _key(override: str) -> str:
    return override.lstrip("+~").split("=", 1)[0]


def _configs_run_by(printed: str) -> list[str]:
    """The configs of the ``experiments/<entry>.py`` a dry run would start."""
    from paraamr.presets import ENTRY_SCRIPTS

    config_of = {Path(v).name: k for k, v in ENTRY_SCRIPTS.items()}
    return sorted(
        {config_of[s] for s in re.findall(r"experiments/(\w+\.py)", printed) if s in config_of}
    )


def _compositions() -> list[tuple[str, str, list[str], list[str], list[str]]]:
    """``(doc, what, candidate configs, overrides, context)`` of every documented override set:

    - the ``experiments/<entry>.py`` lines of the docs and of what their ``make`` lines would run
      (``make -n``: ``ARGS=``, the variables and the recipes' own overrides), with that entry
      point's config;
    - override spans of the prose: a ``+experiment=`` preset with the configs it is for, the
      rest with every entry point whose config has the first key (``data`` of ``data.source``);
      the group choices the page makes (``augment=scpn``) are their context. A bare
      key that no config has (``depth=3``, ``f=0``) is a function's argument, not an override.
    """
    from paraamr.presets import ENTRY_SCRIPTS

    config_of = {Path(v).name: k for k, v in ENTRY_SCRIPTS.items()}
    runs: dict[str, list[tuple[list[str], str]]] = {}
    for doc, args, rc, printed in _doc_make_runs():
        runs.setdefault(doc, []).append((args, printed if rc == 0 else ""))
    tops = _top_keys()
    known = frozenset().union(*tops.values())
    out = []
    for doc, text in _text():
        lines = [(c, c) for c in _shell_lines(text)]
        lines += [
            (f"make {' '.join(a)}", ln) for a, p in runs.get(doc.name, []) for ln in p.splitlines()
        ]
        for what, cmd in lines:
            for script, name in config_of.items():
                args = _words(cmd, f"experiments/{script}")
                if args is not None:
                    for ov in _expand(_sweep_first(args), text):
                        out.append((doc.name, what, [name], ov, []))
        # the page's group choices (spans and command lines): the context of its prose overrides
        lists = [*_override_spans(text), *(ov for d, _, _, ov, _ in out if d == doc.name)]
        groups = [t for ov in lists for t in ov if (ROOT / "conf" / _key(t)).is_dir()]
        for para in _paragraphs(text):
            for tokens in _override_spans(para):
                tokens = [t for t in tokens if "." in _key(t) or _key(t) in known
                          or t.startswith("+") or (ROOT / "conf" / _key(t)).is_dir()]  # fmt: skip
                for ov in _expand(_sweep_first(tokens), text):
                    if not ov:
                        continue
                    names = _preset_configs(ov) or None  # a missing preset: any config says so
                    if names is None:
                        first = {_key(o).split(".")[0] for o in ov if not o.startswith("+")
                                 and not (ROOT / "conf" / _key(o)).is_dir()}  # fmt: skip
                        names = sorted(n for n, keys in tops.items() if first <= keys)
                    out.append((doc.name, f"`{' '.join(tokens)}`", names, ov, groups))
    return out


def _composes(name: str, overrides: list[str], context: list[str]) -> str | None:
    """``None`` when ``overrides`` compose with config ``name`` alone or after one of the group
    choices of ``context`` (``augment=scpn`` for ``augment.lm=null``); else why not."""
    problem = _compose_problem(name, tuple(overrides))
    if problem and any(
        not _compose_problem(name, (g,)) and not _compose_problem(name, (g, *overrides))
        for g in dict.fromkeys(context) if g not in overrides
    ):  # fmt: skip
        return None
    return problem


def test_named_experiment_lines_compose():
    """Every documented override set composes with the config of the entry point it is given
    to: ``python experiments/<entry>.py overrides...`` lines, ``make`` lines (their ``ARGS=``
    and variables, through what ``make -n`` would run), and overrides alone in the prose
    (``source=hub``, ``+experiment=<table>_paper`` for every table the page means); a preset
    must exist and be one for that entry point."""
    bad, seen = [], 0
    for doc, what, names, overrides, context in _compositions():
        seen += 1
        if not names:
            keys = sorted({_key(o) for o in overrides})
            bad.append(f"{doc}: {what}: no entry point's config has {keys}")
        elif not any(_composes(n, overrides, context) is None for n in names):
            bad.append(
                f"{doc}: {what}: {' '.join(overrides)}: {_composes(names[0], overrides, context)}"
            )
    assert seen >= 40 and not bad, sorted(set(bad))


def test_named_model_folders_are_written():
    """Every SCPN / Table 6 run folder the docs name (``results/table6/runs/<corpus>/<format>/``,
    ``results/scpn/...``: models other commands load) is one that a documented training command
    writes (its ``out_dir``: ``${corpus}/${model.input_format}/seed<k>``)."""
    pattern = r"results/(table6/runs|scpn)/([\w.+-]+)/([\w.+-]+)/seed\d+"
    written = set()
    for _, what, names, overrides, _ in _compositions():
        if what.startswith("`"):  # an override span of the prose, not a command
            continue
        for name in set(names) & {"scpn", "table6"}:
            cfg, _ = _composed(name, tuple(overrides))
            m = re.match(pattern, str(cfg.out_dir)) if cfg is not None else None
            if m:
                written.add(m.groups())
    named = {(doc.name, m.groups()) for doc, text in _text() for m in re.finditer(pattern, text)}
    bad = [f"{doc}: results/{'/'.join(g)}/" for doc, g in sorted(named) if g not in written]
    assert len(written) >= 5 and not bad, (bad, sorted(written))


def test_paper_presets_cover_every_table_named():
    """A page that sends readers to the paper presets (``+experiment=<table>_paper``) names one
    for every ``make table<N>`` it lists (Table 7's is ``fewshot_paper``)."""
    bad = []
    comps = _compositions()
    for doc, text in _text():
        if "<table>_paper" not in text:
            continue
        covered = set()
        for d, _, _, overrides, _ in comps:
            if d == doc.name and any(re.search(r"experiment=\w+_paper$", o) for o in overrides):
                covered |= set(_preset_configs(overrides) or [])
        tables = {
            t for a in _make_lines(text) for t in _make_goals(a) if re.fullmatch(r"table\d+", t)
        }
        for t in sorted(tables):
            for name in _configs_run_by(_dry_run(("-o", ".venv/.installed", t))[1]):
                if name not in covered:
                    bad.append(
                        f"{doc.name}: make {t} runs config {name}: no paper preset for it here"
                    )
    assert not bad, bad


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


def test_measured_numbers_are_in_the_pages_they_cite():
    """Every number of the measurement log (docs/history.md, the table the README carried
    before its numbers moved to results files) is written in the page its row links to, where
    the measurement is described: a summary cannot drift from its source (``800 steps
    (57 min)`` where the page measured 29.5 + 28.5 min). The README's own numbers come from
    ``docs/results/`` (tests/test_reported.py)."""
    log = (ROOT / "docs" / "history.md").read_text(encoding="utf-8")
    section = log.split("## Measured here", 1)[1].split("\n## ", 1)[0]
    bad, seen = [], 0
    for row in section.splitlines():
        links = [f"docs/{x}" for x in re.findall(r"\]\(([\w-]+\.md)\)", row)]
        if not row.startswith("| ") or not links:
            continue
        # the page, or the history it moved to when the page became a guide
        pages = " ".join((ROOT / link).read_text(encoding="utf-8") for link in links) + log
        for n in re.findall(r"(?<![\w.])[−-]?\d+(?:[.,]\d+)*(?: ?(?:min|s)\b)?", row):
            seen += 1
            if n.lstrip("−-") not in pages:
                bad.append(f"{links[0]}: {n}")
    assert seen >= 50 and not bad, bad


#: words about how the work was done rather than about the software
PROCESS_WORDS = (
    r"\bnewcomer",
    r"\b\d+-minute (?:target|budget)\b",
    r"\b(?:target|budget) here\b",
    r"\b(?:agreement|cosine|quality|acceptance|accuracy|speed) bar\b",
    r"\bby mistake\b",
    r"\bsessions?\b",
)


def test_docs_describe_the_software_not_the_work():
    bad = [
        f"{doc.name}:{i}: {m.group(0)!r}"
        for doc, text in _text()
        for i, line in enumerate(text.splitlines(), 1)
        for pattern in PROCESS_WORDS
        for m in re.finditer(pattern, line, flags=re.I)
    ]
    assert not bad, bad


def test_licence_and_citation_agree():
    """``LICENSE`` is the MIT licence the README and ``pyproject.toml`` name; ``CITATION.cff``
    (CFF 1.2.0) cites the software (its version and licence) and, as references, the papers
    whose BibTeX the handbook gives, under the same titles."""
    import tomllib

    import yaml

    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "Copyright (c) 2026 paraamr authors" in licence
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and "MIT-licensed" in (ROOT / "README.md").read_text()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert {"message", "title", "authors"} <= set(cff) and all(
        "name" in a or "family-names" in a for a in cff["authors"]
    )
    assert (cff["version"], cff["license"]) == (project["version"], "MIT")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    bib = "\n".join(re.findall(r"```bibtex\n(.*?)```", index, flags=re.S))
    titles = {re.sub(r"[{}]", "", t) for t in re.findall(r'(?<!book)title = "(.+)",', bib)}
    refs = cff["references"]
    assert len(titles) == 2 and titles == {r["title"] for r in refs}
    for r in refs:
        assert r["type"] == "conference-paper" and r["year"] and r["authors"]
        surname = r["authors"][0]["family-names"]
        assert re.search(rf"author = \"{surname},", bib), (surname, bib)
