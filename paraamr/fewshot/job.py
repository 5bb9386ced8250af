"""One Table 7 job from a Hydra config (``conf/fewshot.yaml``): task, k, augmentation, seed.

Steps: draw the few-shot set and split the evaluation set (:func:`paraamr.fewshot.data.
load_fewshot`); augment it (``augment=none|repeat|scpn``); write the training set the run used to
``<out_dir>/train.jsonl`` (and, for paraphrase augmentation, every candidate with its fate to
``augment_log.jsonl``); train the classifier with the shared trainer
(:func:`paraamr.training.fit.fit`, the best epoch by internal-dev accuracy); evaluate the best
weights on the test split (predictions in ``test_predictions.jsonl``); write
``<out_dir>/results.json`` (the job record, :class:`paraamr.results.JobResult`)::

    {"job": "fewshot", "seed", "signature", "setting", "task", "k", "augmentation",
     "test": {"acc", "f1"?}, "dev": {...}, "test_pred_counts", "test_constant_majority" (always
     predicting the few-shot majority label), "best_epoch", "n_train", "augment": {...},
     "sources": {...}, ..., "files", "seconds", "measured"}
"""

from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from paraamr.errors import ConfigError, TrainingError

__all__ = ["run_job", "build_training_set", "setting_name"]

log = logging.getLogger(__name__)


def setting_name(task: str, k: int, augmentation: str) -> str:
    """The row key of a job, e.g. ``MRPC k=15 none``.

    >>> setting_name("mrpc", 15, "repeat")
    'MRPC k=15 repeat'
    """
    return f"{task.upper()} k={int(k)} {augmentation}"


def build_training_set(cfg: DictConfig, train: list, out_dir: Path) -> tuple[list, dict]:
    """The training examples under ``cfg.augment`` and a summary of what augmentation did."""
    from hydra.utils import instantiate

    from paraamr.fewshot.augment import augment, repeat_examples

    aug = cfg.augment
    kind = aug.kind
    if kind == "none":
        return list(train), {"kind": "none"}
    if kind == "repeat":
        return repeat_examples(train, int(aug.copies)), {"kind": "repeat", "copies": aug.copies}
    if kind != "paraphrase":
        raise ConfigError(f"augment.kind: {kind!r} is not none, repeat or paraphrase")
    paraphraser = instantiate(aug.paraphraser)
    scorer = instantiate(aug.lm) if aug.get("lm") and aug.lm.get("_target_") else None
    near_share = aug.get("near_copy_share", 0.1)
    res = augment(
        train,
        paraphraser,
        templates=list(aug.templates),
        sentences=aug.sentences,
        max_perplexity=aug.max_perplexity,
        scorer=scorer,
        near_copy_share=near_share,
    )
    with open(out_dir / "augment_log.jsonl", "w", encoding="utf-8") as fh:
        for r in res.records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    sig = (
        paraphraser.signature() if hasattr(paraphraser, "signature") else type(paraphraser).__name__
    )
    summary = {
        "kind": "paraphrase",
        "corpus": aug.get("corpus"),
        "paraphraser": sig,
        "sentences": aug.sentences,
        "templates": list(aug.templates),
        "perplexity_filter": res.perplexity_filter,
        "near_copy_share": near_share,
        "stats": dict(res.stats),
        "paraphraser_counts": dict(getattr(paraphraser, "counts", {})),
        "log": str(out_dir / "augment_log.jsonl"),
    }
    return res.examples, summary


def run_job(cfg: DictConfig) -> dict[str, Any]:
    """Run one job (see the module docstring); returns what ``results.json`` holds."""
    from hydra.utils import instantiate

    from paraamr.fewshot.data import TASKS, load_fewshot, write_examples
    from paraamr.fewshot.module import accuracy_f1
    from paraamr.results import JobResult, Stopwatch
    from paraamr.signature import Signature, versions_field
    from paraamr.training.fit import fit, restore_best, seed_run

    clock = Stopwatch()
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seed = int(cfg.seed)
    data = load_fewshot(
        cfg.task,
        int(cfg.k),
        seed,
        data_dir=cfg.paths.data_dir,
        source=cfg.source,
        split_seed=int(cfg.split_seed),
    )
    train, aug = build_training_set(cfg, data.train, out)
    train_file = write_examples(out / "train.jsonl", train)
    f1_label = TASKS[cfg.task].f1_label
    seed_run(seed)
    module = instantiate(cfg.model, num_labels=data.num_labels, f1_label=f1_label)
    dm = instantiate(cfg.data, train=train, dev=data.dev, tokenizer=module.tokenizer, seed=seed)
    res = fit(cfg, module, dm)
    ckpt = res.checkpoint
    if ckpt is None or not restore_best(module, ckpt):
        raise TrainingError(f"no internal-dev evaluation ran, so no best epoch (see {out})")
    best_path = Path(ckpt.best_model_path)
    import torch

    state = torch.load(best_path, map_location="cpu", weights_only=False)
    best_epoch = int(state.get("epoch", -1)) + 1
    kw = {
        "max_seq_length": int(cfg.data.max_seq_length),
        "batch_size": int(cfg.data.eval_batch_size),
        "progress": True,
    }
    test_pred = module.predict_labels(data.test, **kw)
    test = accuracy_f1(test_pred, [e.label for e in data.test], f1_label)
    with open(out / "test_predictions.jsonl", "w", encoding="utf-8") as fh:
        for e, p in zip(data.test, test_pred, strict=True):
            fh.write(json.dumps({"uid": e.uid, "label": e.label, "pred": p}) + "\n")
    majority = Counter(e.label for e in data.train).most_common(1)[0][0]
    constant = accuracy_f1([majority] * len(data.test), [e.label for e in data.test], f1_label)
    dev = accuracy_f1(module.predict_labels(data.dev, **kw), [e.label for e in data.dev], f1_label)
    if not cfg.get("keep_checkpoints"):
        shutil.rmtree(out / "checkpoints", ignore_errors=True)
    name = str(cfg.augment.name)
    sig = Signature.build(
        ("task", f"glue-{cfg.task}"),
        ("data", cfg.source),
        ("k", cfg.k),
        ("split", f"dev1/3-test2/3,seed{cfg.split_seed}"),
        ("model", cfg.model.model_name_or_path),
        ("aug", name),
        ("bs", cfg.data.batch_size),
        ("lr", cfg.model.lr),
        ("wd", cfg.model.weight_decay),
        ("opt", cfg.model.optimizer),
        ("epochs", cfg.trainer.max_epochs),
        ("select", "best-epoch-dev-acc"),
        ("maxlen", cfg.data.max_seq_length),
        ("versions", versions_field()),
    )
    fields = {
        "setting": setting_name(cfg.task, cfg.k, name),
        "task": cfg.task,
        "k": int(cfg.k),
        "augmentation": name,
        "test": test,
        "dev": dev,
        "test_pred_counts": {str(k): v for k, v in sorted(Counter(test_pred).items())},
        "test_constant_majority": constant,
        "best_epoch": best_epoch,
        "steps": int(res.trainer.global_step),
        "n_train": len(train),
        "n_dev": len(data.dev),
        "n_test": len(data.test),
        "train_file": str(train_file),
        "few_shot_uids": [e.uid for e in data.train],
        "train_labels": [e.label for e in data.train],
        "augment": aug,
        "sources": data.sources,
        "counts": dict(data.counts),
        "model": module.model_path,
    }
    files = {"train": train_file, "test_predictions": out / "test_predictions.jsonl"}
    record = JobResult("fewshot", seed, str(sig), fields, files, clock.seconds())
    record.write(out)
    result = record.to_dict()
    log.info("%s seed %d: test %s (best epoch %d)", result["setting"], seed, test, best_epoch)
    return result
