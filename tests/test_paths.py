"""The ``paths`` config group: the data folder is looked up once, by the entry point.

Stages read ``cfg.paths.data_dir``; only command-line mains (argparse, not Hydra) call
``resolve_data_dir`` themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from paraamr.datadir import data_path, resolve_paths
from paraamr.errors import DataNotFoundError

ROOT = Path(__file__).resolve().parents[1]
ENTRY_CONFIGS = sorted(p.stem for p in (ROOT / "conf").glob("*.yaml"))


def test_resolve_paths_finds_the_folder_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PARAAMR_DATA", str(tmp_path))
    cfg = OmegaConf.create({"paths": {"data_dir": None}})
    resolve_paths(cfg)
    assert cfg.paths.data_dir == str(tmp_path.resolve())
    given = tmp_path / "mine"
    given.mkdir()
    cfg = OmegaConf.create({"paths": {"data_dir": str(given)}})
    resolve_paths(cfg)  # a given folder wins over $PARAAMR_DATA
    assert cfg.paths.data_dir == str(given.resolve())


def test_a_missing_given_folder_fails_at_once_and_none_found_fails_when_read(tmp_path, monkeypatch):
    cfg = OmegaConf.create({"paths": {"data_dir": str(tmp_path / "nope")}})
    with pytest.raises(DataNotFoundError, match="nope does not exist"):
        resolve_paths(cfg)
    import paraamr.datadir as datadir

    monkeypatch.delenv("PARAAMR_DATA", raising=False)

    def nothing(data_dir, project_root=None):
        if data_dir:
            return Path(data_dir)
        raise DataNotFoundError("no data found")

    monkeypatch.setattr(datadir, "resolve_data_dir", nothing)
    cfg = OmegaConf.create({"paths": {"data_dir": None}})
    resolve_paths(cfg)  # a run on the user's own files needs no data folder
    assert cfg.paths.data_dir is None
    with pytest.raises(DataNotFoundError, match=r"PARAAMR_DATA.*make data"):
        data_path(cfg.paths.data_dir, "paraphrase")


@pytest.mark.parametrize("name", ENTRY_CONFIGS)
def test_every_entry_config_has_the_paths_group(compose_config, data_dir, name):
    extra = {"table5": ["data.path=x.jsonl"], "table6": ["data.path=x.jsonl"]}.get(name, [])
    cfg = compose_config(name, *extra)
    assert "paths" in cfg and "data_dir" not in cfg  # one key, in one group
    assert Path(cfg.paths.data_dir) == Path(data_dir).resolve()
    assert Path(cfg.paths.cache_dir).is_absolute()


def test_the_entry_point_wrapper_resolves_paths(tmp_path):
    from paraamr.presets import hydra_entry

    seen = []
    task = hydra_entry("table2")(lambda cfg: seen.append(cfg.paths.data_dir))
    (tmp_path / "x").mkdir()
    task(OmegaConf.create({"paths": {"data_dir": f"{tmp_path}/x/.."}}))
    assert seen == [str(tmp_path.resolve())]


def _callers(name: str) -> set[str]:
    out = set()
    for path in (ROOT / "paraamr").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            f = node.func if isinstance(node, ast.Call) else None
            if f is not None and getattr(f, "id", getattr(f, "attr", None)) == name:
                out.add(path.relative_to(ROOT / "paraamr").as_posix())
    return out


def test_only_command_line_mains_look_up_the_data_folder():
    """Stages take the folder the entry point resolved; a module that calls
    ``resolve_data_dir`` must be a command of its own (a ``main`` with argparse)."""
    callers = _callers("resolve_data_dir") - {"datadir.py"}
    assert callers  # the check sees calls at all
    for rel in sorted(callers):
        text = (ROOT / "paraamr" / rel).read_text(encoding="utf-8")
        assert "def main(" in text and "argparse" in text, f"{rel} resolves the data folder"
    assert _callers("resolve_paths") == {"presets.py"}


def test_the_cache_folder_is_one_setting(tmp_path, monkeypatch, compose_config):
    """``paths.cache_dir`` (default ``$PARAAMR_CACHE``, else ``.cache``) places every cache:
    the configs' parse and perplexity caches and, through ``$PARAAMR_CACHE``, the library's
    model caches (ONNX exports, the dequantised SmolLM2)."""
    import paraamr.datadir as datadir
    from paraamr.datadir import cache_root
    from paraamr.lms.smollm2 import cache_dir as smollm2_cache

    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "env"))  # restored after the test
    monkeypatch.setattr(datadir, "_STARTED_CACHE", str(tmp_path / "env"))
    assert compose_config("table2").paths.cache_dir == str(tmp_path / "env")
    mine = tmp_path / "mine"
    cfg = compose_config("validity", f"paths.cache_dir={mine}")
    assert cfg.perplexity.cache == f"{mine}/validity"
    assert cache_root() == mine and smollm2_cache().is_relative_to(mine)
    t6 = compose_config("table6", "data.path=x.jsonl", f"paths.cache_dir={mine}")
    assert t6.data.parse_cache == f"{mine}/scpn/parses-spacy.jsonl"
