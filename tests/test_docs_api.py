"""The API page renders every docstring example as code, whatever the mkdocs-autorefs version.

A doctest written in a docstring's prose (not under ``Examples:``) is a quote to Markdown, and
``x["row"]`` in it a reference link that some autorefs versions cannot resolve, which fails
``mkdocs build --strict``. The griffe extension that mkdocs.yml names fences them; this checks,
with that configuration, that no docstring of a module on the API page keeps a bare ``>>>``.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from pathlib import Path

import griffe
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _mkdocs_python_options() -> dict:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    plugins = yaml.safe_load(text)["plugins"]
    entry = next(p["mkdocstrings"] for p in plugins if isinstance(p, dict) and "mkdocstrings" in p)
    return entry["handlers"]["python"]["options"]


def _extensions() -> list:
    out = []
    for spec in _mkdocs_python_options().get("extensions", []):
        path, _, cls = spec.partition(":")
        mod_spec = importlib.util.spec_from_file_location("ext", ROOT / path)
        mod = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(mod)
        out.append(getattr(mod, cls)())
    return out


def _bare_doctests(obj, found: list[str]) -> None:
    if obj.is_alias:
        return
    if obj.docstring is not None:
        for section in obj.docstring.parse("google"):
            if section.kind.value != "text":
                continue
            fenced = False
            for line in section.value.splitlines():
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                elif line.lstrip().startswith(">>>") and not fenced:
                    found.append(f"{obj.path}: {line.strip()[:60]}")
                    break
    for member in obj.members.values():
        _bare_doctests(member, found)


def test_no_docstring_on_the_api_page_keeps_a_bare_doctest():
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    modules = re.findall(r"^::: ([\w.]+)", api, flags=re.M)
    assert len(modules) >= 20
    loader = griffe.GriffeLoader(
        search_paths=[str(ROOT)],
        docstring_parser="google",
        extensions=griffe.load_extensions(*_extensions()),
    )
    found: list[str] = []
    for name in modules:
        _bare_doctests(loader.load(name), found)
    assert not found, found[:10]


def test_the_extension_fences_prose_doctests_only():
    from_file = importlib.util.spec_from_file_location(
        "doctest_blocks", ROOT / "mkdocs_ext" / "doctest_blocks.py"
    )
    mod = importlib.util.module_from_spec(from_file)
    from_file.loader.exec_module(mod)
    p = ">" * 3
    text = f"Intro.\n\n{p} rows[0][\"row\"]\n'A'\n\nExamples:\n    {p} f()\n    1\n\nEnd."
    assert mod.fence_doctests(text).splitlines() == [
        "Intro.", "", "```pycon", f'{p} rows[0]["row"]', "'A'", "```", "",
        "Examples:", f"    {p} f()", "    1", "", "End.",
    ]  # fmt: skip
    assert mod.fence_doctests(f"```\n{p} x\n```") == f"```\n{p} x\n```"  # already fenced
    assert doctest.testmod(mod).failed == 0
