"""Crash injection for the kill -9 tests: run a script with the shard runner's fault hook set.

``PARAAMR_FAULT=POINT[:N] python -m paraamr.testing.faults SCRIPT [ARGS...]`` runs ``SCRIPT`` as
``__main__`` (so Hydra entry points work unchanged) with :data:`paraamr.shards.FAULT` set: the
``N``-th time this process reaches ``POINT`` (``after_append``, ``after_progress``,
``before_finish``, ``after_rename:<stream>``) it kills itself with ``SIGKILL``, leaving the files
exactly as ``kill -9`` at that instant would. Without ``PARAAMR_FAULT`` the script runs as is.

>>> hook = make_hook("after_append:2", action=lambda point: print("killed at", point))
>>> for p in ["after_append", "after_progress", "after_append", "after_append"]:
...     hook(p)
killed at after_append
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
from collections.abc import Callable

__all__ = ["make_hook", "install", "main", "ENV"]

ENV = "PARAAMR_FAULT"


def _sigkill(point: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def make_hook(spec: str, action: Callable[[str], None] = _sigkill) -> Callable[[str], None]:
    """A fault hook that calls ``action`` the ``N``-th time ``POINT`` is reached (``POINT[:N]``,
    ``N`` defaults to 1)."""
    point, _, n = spec.rpartition(":")
    if not n.isdigit():  # POINT alone (it may hold a colon: after_rename:records) means POINT:1
        point, n = spec, "1"
    if not point or int(n) < 1:
        raise ValueError(f"{ENV} must be POINT[:N] with N >= 1, got {spec!r}")
    seen = 0

    def hook(p: str) -> None:
        nonlocal seen
        if p == point:
            seen += 1
            if seen == int(n):
                action(p)

    return hook


def install(spec: str | None = None) -> None:
    """Set :data:`paraamr.shards.FAULT` from ``spec`` (default: the ``PARAAMR_FAULT`` variable)."""
    import paraamr.shards

    spec = spec if spec is not None else os.environ.get(ENV)
    if spec:
        paraamr.shards.FAULT = make_hook(spec)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        raise SystemExit("usage: python -m paraamr.testing.faults SCRIPT [ARGS...]")
    install()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
