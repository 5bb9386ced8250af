"""Data settings of a TOP run (:class:`TopData`); its trainings read ``(source, target)``
string pairs through the shared :class:`~paraamr.training.data.PairDataModule`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.errors import ConfigError
from paraamr.training.data import PairDataModule

__all__ = ["TopData"]


@dataclass
class TopData:
    """The data settings of a TOP run (``conf/data/top.yaml``): files and batches.

    Relative paths that do not exist from the working directory are read under the data
    directory ``data_dir`` (in the configs ``${paths.data_dir}``, resolved by the entry point;
    from Python, :func:`paraamr.datadir.resolve_data_dir`).

    Args:
        train / val / test: TOP files (``top-v1`` TSV, ``.seq`` or TOPv2 TSV); ``val`` may
            be ``None`` (no validation: the final weights are kept).
        format: ``None``: guessed per file.
        on_error: ``raise`` at the first bad tree (file:line) or ``skip`` and count.
        allow_empty: accept empty spans (TOPv2 has 24).
        limit_train / limit_val / limit_test: a seeded random subset of that size.
        subset_seed: seed of those subsets.
        batch_size / val_batch_size / num_workers: batches (per device).
        group_by_length: training batches of pairs of similar length (they pad little).
        loss_norm: ``batch`` (each batch's mean over its answer tokens) or ``corpus`` (its sum
            over the training set's mean answer tokens per batch:
            :func:`paraamr.training.recipe.mean_answer_tokens`).
        data_dir: data directory for relative paths.

    >>> TopData(train="a", test="b", on_error="ignore")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    paraamr.errors.ConfigError: data.on_error must be one of ...
    """

    train: str | None = None
    val: str | None = None
    test: str | None = None
    format: str | None = None
    on_error: str = "raise"
    allow_empty: bool = False
    limit_train: int | None = None
    limit_val: int | None = None
    limit_test: int | None = None
    subset_seed: int = 0
    batch_size: int = 16
    val_batch_size: int | None = None
    num_workers: int = 0
    group_by_length: bool = False
    loss_norm: str = "batch"
    data_dir: str | None = None
    skipped: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        from paraamr.corpus.errors import ON_ERROR
        from paraamr.top.readers import FORMATS
        from paraamr.training.recipe import LOSS_NORMS

        if self.loss_norm not in LOSS_NORMS:
            raise ConfigError(f"data.loss_norm must be one of {LOSS_NORMS}, got {self.loss_norm!r}")
        if self.on_error not in ON_ERROR:
            raise ConfigError(f"data.on_error must be one of {ON_ERROR}, got {self.on_error!r}")
        if self.format is not None and self.format not in FORMATS:
            raise ConfigError(f"data.format must be one of {FORMATS} or null, got {self.format!r}")
        for key in ("limit_train", "limit_val", "limit_test"):
            v = getattr(self, key)
            if v is not None and v < 1:
                raise ConfigError(f"data.{key} must be >= 1 or null, got {v}")

    def path(self, name: str) -> Path | None:
        """The resolved path of split ``name`` (``None`` when unset)."""
        p = getattr(self, name)
        if not p:
            return None
        p = Path(p).expanduser()
        if p.is_absolute() or p.exists():
            return p
        from paraamr.datadir import data_path

        return data_path(self.data_dir, p)

    def load(self, name: str) -> list:
        """The trees of split ``name`` (a seeded subset with ``limit_<name>``)."""
        from paraamr.corpus.errors import SkipLog
        from paraamr.top.readers import read_trees

        path = self.path(name)
        if path is None:
            return []
        skips = SkipLog()
        trees = read_trees(
            path, self.format, on_error=self.on_error, skips=skips, allow_empty=self.allow_empty
        )
        if skips.counts:
            self.skipped[name] = dict(skips.counts)
        limit = getattr(self, f"limit_{name}")
        if limit is not None and limit < len(trees):
            rng = random.Random(self.subset_seed)
            trees = [trees[i] for i in sorted(rng.sample(range(len(trees)), limit))]
        return trees

    def datamodule(self, train_pairs, val_pairs, encode_batch, seed: int) -> PairDataModule:
        return PairDataModule(
            train_pairs,
            val_pairs,
            encode_batch,
            batch_size=self.batch_size,
            val_batch_size=self.val_batch_size,
            seed=seed,
            num_workers=self.num_workers,
            group_by_length=self.group_by_length,
        )
