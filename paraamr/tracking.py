"""Weights & Biases logging, offline by default.

``WANDB_MODE`` decides: unset -> ``offline`` (real run files under ``<dir>/wandb/``, upload later
with ``wandb sync <dir>/wandb/offline-run-*``); ``online`` -> live; ``disabled`` -> nothing.
Every run is closed (``finish``) even when the job fails, so a multirun never reuses a dead run.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["wandb_run", "log_table", "wandb_mode"]

log = logging.getLogger(__name__)


def wandb_mode(mode: str | None = None) -> str:
    return mode or os.environ.get("WANDB_MODE") or "offline"


@contextlib.contextmanager
def wandb_run(
    *,
    project: str,
    group: str,
    name: str,
    config: Mapping[str, Any],
    directory: str,
    mode: str | None = None,
    enabled: bool = True,
) -> Iterator[Any]:
    """Context manager yielding a wandb run (or ``None`` when disabled)."""
    if not enabled or wandb_mode(mode) == "disabled":
        yield None
        return
    import wandb

    os.makedirs(directory, exist_ok=True)
    run = wandb.init(
        project=project,
        group=group,
        name=name,
        config=dict(config),
        dir=directory,
        mode=wandb_mode(mode),
        reinit="create_new",
    )
    try:
        yield run
    finally:
        run.finish()


def log_table(run, key: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Log a ``wandb.Table`` (written as plain JSON under ``files/media/table/``)."""
    if run is None:
        return
    import wandb

    run.log({key: wandb.Table(columns=list(columns), data=[list(r) for r in rows])})
