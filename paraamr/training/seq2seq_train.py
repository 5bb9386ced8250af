"""Train one prompt -> answer model (a TOP generator or parser, an AMR parser or generator)
from a run's config.

:func:`train_seq2seq` builds the module of ``cfg.model`` (a
:class:`~paraamr.training.seq2seq.Seq2SeqModule`) and the data module of ``cfg.data`` (a
:class:`~paraamr.training.data.PairDataModule`), applies the role's trainer overrides
(``cfg.stages.<role>.trainer``) and ``cfg.data.loss_norm``
(:func:`paraamr.training.recipe.mean_answer_tokens`), and fits through
:func:`paraamr.training.fit.fit` (finite-loss guard, best checkpoint by ``val/loss`` = log
validation perplexity, CSV + W&B loggers). The best weights are exported with
``save_pretrained`` to ``<dir>/model``; a finished role is not retrained, an interrupted one
resumes from ``<dir>/checkpoints/last.ckpt``. A finished role is reused only under the
settings it was trained with (:func:`fit_settings`, recorded in ``train_result.json``);
other settings raise :class:`~paraamr.errors.ConfigError`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from paraamr.errors import ConfigError
from paraamr.training.seq2seq import MODULE_FILE, Seq2SeqModule
from paraamr.utils import write_json_atomic

__all__ = ["train_seq2seq", "fit_settings", "reuse_mismatch", "finished_record", "TRAIN_FILE"]

log = logging.getLogger(__name__)

TRAIN_FILE = "train_result.json"


def _fit_config(cfg: DictConfig, role: str, work: Path, name: str) -> DictConfig:
    stage = cfg.stages.get(role) or {}
    sub = OmegaConf.create(
        {
            "trainer": OmegaConf.to_container(cfg.trainer, resolve=True),
            "callbacks": OmegaConf.to_container(cfg.callbacks, resolve=False),
            "logger": OmegaConf.to_container(cfg.logger, resolve=False),
            "out_dir": str(work),
            "seed": int(cfg.seed),
            "resume": None,
        }
    )
    with open_dict(sub):
        sub.trainer = OmegaConf.merge(sub.trainer, stage.get("trainer") or {})
        sub.callbacks.checkpoint.dirpath = str(work / "checkpoints")
        for lg in sub.logger.values():
            if lg is not None and "save_dir" in lg:
                lg.save_dir = str(work)
        if sub.logger.get("wandb") is not None:
            sub.logger.wandb.name = name
        last = work / "checkpoints" / "last.ckpt"
        if last.exists():
            sub.resume = str(last)
    return sub


def fit_settings(cfg: DictConfig, role: str) -> dict[str, Any]:
    """The training settings a finished model records (``train_result.json``'s ``settings``)
    and a rerun that reuses it must match: steps, learning rate, frozen blocks, batch size,
    grouping, loss."""
    stage = (cfg.stages.get(role) or {}).get("trainer") or {}
    return {
        "max_steps": stage.get("max_steps", cfg.trainer.get("max_steps")),
        "lr": cfg.model.get("lr"),
        "freeze_layers": cfg.model.get("freeze_layers"),
        "batch_size": cfg.data.get("batch_size"),
        "group_by_length": bool(cfg.data.get("group_by_length", False)),
        "loss_norm": cfg.data.get("loss_norm", "batch"),
    }


def reuse_mismatch(
    record: dict[str, Any], settings: dict[str, Any], saved: Any = None
) -> dict[str, tuple]:
    """``{setting: (trained with, config)}`` where a finished model's ``record`` differs from
    ``settings``; a record written before ``settings`` existed is checked on its steps only, and
    one written before ``freeze_layers`` was among them on the ``freeze_layers`` of ``saved``
    (the model's saved sidecar) where that names it. ``settings["train_pairs"]`` (how many
    training pairs the run has now) is checked against the record's count.

    >>> reuse_mismatch({"steps": 400}, {"max_steps": 600, "lr": 2e-4})
    {'max_steps': (400, 600)}
    >>> reuse_mismatch({"steps": 600, "settings": {"max_steps": 600, "loss_norm": "batch"}},
    ...                {"max_steps": 600, "loss_norm": "corpus"})
    {'loss_norm': ('batch', 'corpus')}
    >>> reuse_mismatch({"steps": 400}, {"max_steps": 400, "freeze_layers": 1},
    ...                {"freeze_layers": 20})
    {'freeze_layers': (20, 1)}
    >>> reuse_mismatch({"steps": 400, "train_pairs": 1674}, {"max_steps": 400, "train_pairs": 1974})
    {'train_pairs': (1674, 1974)}
    """
    had = record.get("settings") or {"max_steps": record.get("steps")}
    if "freeze_layers" not in had and isinstance(saved, dict) and "freeze_layers" in saved:
        had = {**had, "freeze_layers": saved["freeze_layers"]}
    if "train_pairs" in settings and "train_pairs" in record:
        had = {**had, "train_pairs": record["train_pairs"]}
    return {k: (v, settings.get(k)) for k, v in had.items() if settings.get(k) != v}


def finished_record(
    cfg: DictConfig, role: str, work: str | Path, train_pairs: int | None = None
) -> dict[str, Any] | None:
    """The record (``train_result.json``) of the finished model under ``work``, or None where
    there is none; a :class:`~paraamr.errors.ConfigError` naming each difference where it was
    trained with other settings than ``cfg``'s (:func:`fit_settings`; ``train_pairs``, when
    given, against the record's count), so that no score or signature names settings the model
    never had. A model is finished when its record and its saved sidecar both exist.
    """
    from hydra.utils import get_class

    work = Path(work)
    model_dir = work / "model"
    done = work / TRAIN_FILE
    sidecar = getattr(get_class(cfg.model._target_), "sidecar", MODULE_FILE)
    if not (done.exists() and (model_dir / sidecar).exists()):
        return None
    record = json.loads(done.read_text(encoding="utf-8"))
    saved = json.loads((model_dir / sidecar).read_text(encoding="utf-8"))
    now = fit_settings(cfg, role)
    if train_pairs is not None:
        now["train_pairs"] = train_pairs
    differ = reuse_mismatch(record, now, saved)
    if differ:
        raise ConfigError(
            f"{model_dir} was trained with other settings (trained with, config): {differ}; "
            "set them back to reuse it, or train into another out_dir"
        )
    return record


def train_seq2seq(
    cfg: DictConfig,
    role: str,
    train_pairs: Sequence[tuple[str, str]],
    val_pairs: Sequence[tuple[str, str]],
    work: str | Path,
    name: str | None = None,
    **model_args: Any,
) -> dict[str, Any]:
    """Train (or reuse) one model; returns ``{"model_dir", "best_val_loss", "steps", ...}``.
    ``model_args`` go to ``cfg.model``'s constructor beside its config (TOP: the labels)."""
    from hydra.utils import instantiate

    from paraamr.training.fit import fit, restore_best, seed_run
    from paraamr.training.recipe import mean_answer_tokens

    work = Path(work)
    record = finished_record(cfg, role, work, len(train_pairs))
    if record is not None:
        log.info("%s: reusing %s", role, work / "model")
        return record
    model_dir = work / "model"
    sub = _fit_config(cfg, role, work, name or f"{role}-{work.name}")
    seed_run(int(cfg.seed))
    module: Seq2SeqModule = instantiate(cfg.model, **model_args)
    data = instantiate(cfg.data)
    dm = data.datamodule(list(train_pairs), list(val_pairs), module.encode_batch,
                         seed=int(cfg.seed))  # fmt: skip
    if getattr(data, "loss_norm", "batch") == "corpus":
        per_pair = mean_answer_tokens(list(train_pairs), module.encode_batch)
        module.loss_tokens = data.batch_size * per_pair
        log.info("%s: loss per batch / %.1f answer tokens (%d x %.2f, the training mean)", role,
                 module.loss_tokens, data.batch_size, per_pair)  # fmt: skip
    res = fit(sub, module, dm)
    ckpt = res.checkpoint
    best = (
        float(ckpt.best_model_score)
        if ckpt is not None and ckpt.best_model_score is not None
        else math.nan
    )
    if not restore_best(module, ckpt):
        log.warning("%s: no validation ran; exporting the final weights", role)
    module.save(model_dir)
    result = {
        "role": role,
        "settings": fit_settings(cfg, role),
        "model_dir": str(model_dir),
        "best_val_loss": best,
        "best_val_ppl": math.exp(best) if math.isfinite(best) else math.nan,
        "steps": int(res.trainer.global_step),
        "train_pairs": len(train_pairs),
        "val_pairs": len(val_pairs),
        "best_checkpoint": (ckpt.best_model_path or None) if ckpt else None,
        "backbone": module.settings["model_name_or_path"],
        "added_tokens": len(module.added_tokens),
    }
    write_json_atomic(work / TRAIN_FILE, result, sort_keys=False)
    return result
