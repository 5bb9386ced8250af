"""One Table 5 job: SimCSE trained on one paraphrase corpus with one seed, evaluated on STS.

One job = one (corpus, seed): train (:func:`paraamr.simcse.train.train`), evaluate the best model
on the STS suite (:func:`paraamr.sts.evaluate_sts`), write ``<out_dir>/results.json`` and one
W&B run. The job with ``train_corpus=none`` evaluates the untrained encoder (row "none").
:mod:`paraamr.tables.table5` gathers the jobs into the table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from paraamr.errors import ConfigError, TrainingError

__all__ = ["subsample_suite", "run_job", "job_summary", "log_job_to_wandb"]

log = logging.getLogger(__name__)


def subsample_suite(suite: Mapping, max_pairs: int | None, seed: int = 0) -> dict:
    """At most ``max_pairs`` pairs per set, drawn without replacement, each subset in proportion
    to its size (same draw for every model: seeded). ``None`` keeps everything.

    >>> from paraamr.sts.readers import StsSet
    >>> s = StsSet("X", {"a": ([str(i) for i in range(10)], [str(i) for i in range(10)],
    ...                        np.arange(10.0))}, "mem")
    >>> subsample_suite({"X": s}, 4)["X"].n
    4
    """
    if not max_pairs:
        return dict(suite)
    from paraamr.sts.readers import StsSet

    rng = np.random.default_rng(seed)
    out = {}
    for name, s in suite.items():
        frac = min(1.0, max_pairs / max(1, s.n))
        subsets = {}
        for task, (a, b, g) in s.subsets.items():
            k = max(2, round(len(g) * frac)) if len(g) >= 2 else len(g)
            idx = np.sort(rng.choice(len(g), size=min(k, len(g)), replace=False))
            subsets[task] = ([a[i] for i in idx], [b[i] for i in idx], np.asarray(g)[idx])
        out[name] = StsSet(name, subsets, s.source, s.skipped, s.layout)
    return out


def _resolve_data_path(cfg) -> None:
    """A relative ``data.path`` that does not exist from here is taken under the data dir."""
    from omegaconf import open_dict

    from paraamr.datadir import data_path

    p = cfg.data.path
    if p is not None and not isinstance(p, str):
        raise ConfigError(
            f"data.path lists {len(p)} corpora: SimCSE trains on one (pooled corpora are an "
            "SCPN setting: experiments/table6.py +experiment=table6_pooled)"
        )
    if p and not Path(p).is_absolute() and not Path(p).exists():
        with open_dict(cfg):
            cfg.data.path = str(data_path(cfg.paths.data_dir, p))


def _sentence_transformer(name: str) -> bool:
    """Whether ``name`` loads as a whole sentence encoder (a preset such as ``minilm`` or
    ``simcse``, or a sentence-transformers folder), not a bare backbone."""
    from paraamr.lms.loading import resolve_backbone
    from paraamr.metrics.semantic import MODELS

    if name in MODELS:
        return True
    path = Path(resolve_backbone(name))
    return not path.is_dir() or (path / "modules.json").is_file()


def run_job(cfg) -> dict:
    """Train (unless the corpus is ``none``), evaluate on STS, write ``results.json`` (the job
    record, :class:`paraamr.results.JobResult`: with its wall time, date and CPU); returns it."""
    from paraamr.datadir import data_path
    from paraamr.metrics.semantic import load_encoder
    from paraamr.results import JobResult, Stopwatch
    from paraamr.sts import evaluate_sts, load_sts_suite, sts_signature

    clock = Stopwatch()
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    suite = load_sts_suite(
        data_path(cfg.paths.data_dir), layout=cfg.sts.layout, include=tuple(cfg.sts.include)
    )
    suite = subsample_suite(suite, cfg.sts.max_pairs_per_set, seed=0)
    fields: dict = {"corpus": cfg.corpus}
    if cfg.corpus == "none":
        model_path = str(cfg.model.model_name_or_path)
    else:
        from paraamr.simcse.train import train

        _resolve_data_path(cfg)
        trained = train(cfg)
        if not trained.get("best_model"):
            raise TrainingError(f"training wrote no best model (see {out}); cannot evaluate")
        fields.update({k: trained[k] for k in ("best_val", "steps") if k in trained})
        model_path = trained["best_model"]
    device = "cpu" if cfg.trainer.accelerator == "cpu" else None
    if cfg.corpus == "none" and not _sentence_transformer(model_path):
        # a plain backbone (SmolLM2, BERT): the module's pooling over it, untrained, as the
        # trained rows are evaluated
        from hydra.utils import instantiate
        from sentence_transformers import SentenceTransformer

        from paraamr.simcse.module import save_sentence_transformer

        saved = save_sentence_transformer(instantiate(cfg.model), out / "untrained_model")
        encoder = SentenceTransformer(str(saved), device=device)
    elif cfg.corpus == "none":
        encoder = load_encoder(model_path, device)
    else:  # a fresh load: the cached loader would keep an older model saved at the same path
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(model_path, device=device)
    from paraamr.precision import resolve

    sts_precision = resolve(cfg.sts.get("precision"), device or "cpu", "sts.precision")
    if sts_precision.name == "bf16":  # fp32 weights, bf16 matmuls (AVX512-BF16 / AMX: fast)
        from paraamr.metrics.semantic import AutocastEncoder

        encoder = AutocastEncoder(encoder, device or "cpu")
    sts = evaluate_sts(encoder, suite, batch_size=cfg.sts.batch_size, progress=True)
    sig = sts_signature(str(cfg.model.model_name_or_path), suite)
    if sts_precision.name != "fp32":
        sig = sig.with_fields(sts_precision=sts_precision.name)
    if cfg.sts.max_pairs_per_set:
        sig = sig.with_fields(subsample=f"{cfg.sts.max_pairs_per_set}-pairs-per-set,seed0")
    if cfg.corpus != "none":
        sig = sig.with_fields(
            train=f"{cfg.corpus},{cfg.data.format}",
            steps=fields.get("steps"),
            bs=cfg.data.batch_size,
            lr=cfg.model.lr,
            pool=cfg.model.pooling,
            T=cfg.model.temperature,
            ppl=f"<={cfg.data.max_perplexity}",
            cap=cfg.data.get("max_paraphrases_per_source"),
            frozen=cfg.model.get("freeze_layers") or 0,
            precision=cfg.trainer.precision,
        )
    fields.update({"model": model_path, "sts": sts})
    record = JobResult("simcse", int(cfg.seed), str(sig), fields, {"model": model_path},
                       clock.seconds())  # fmt: skip
    record.write(out)
    result = record.to_dict()
    log_job_to_wandb(cfg, result)
    log.info("%s seed %s: STS avg spearman %.2f", cfg.corpus, cfg.seed, sts["avg"]["spearman"])
    return result


def job_summary(result: dict) -> dict:
    """The flat W&B summary row of one job: STS averages and each year's Spearman.

    >>> sts = {"avg": {"spearman": 80.0}, "years": {"STS12": {"spearman": 70.0}}}
    >>> job_summary({"corpus": "c", "seed": 1, "signature": "s", "sts": sts})["sts/STS12/spearman"]
    70.0
    """
    sts = result["sts"]
    row = {
        "corpus": result["corpus"],
        "seed": result["seed"],
        "signature": str(result["signature"]),
    }
    row.update({f"sts/avg/{k}": v for k, v in sts["avg"].items()})
    row.update({f"sts/{y}/spearman": v["spearman"] for y, v in sts["years"].items()})
    for k in ("steps", "best_val"):
        if result.get(k) is not None:
            row[k] = result[k]
    return row


def log_job_to_wandb(cfg, result: dict) -> None:
    """One W&B run per job (group ``logger.wandb.group``, name ``<corpus>-seed<seed>``, job type
    ``sts``) whose summary is :func:`job_summary`, so runs compare side by side in W&B; the
    untrained baseline (no training run) gets one too. Offline unless ``WANDB_MODE`` says else."""
    from paraamr.tracking import wandb_run

    w = cfg.logger.wandb
    with wandb_run(
        project=w.project,
        group=w.group or "table5",
        name=f"{result['corpus']}-seed{result['seed']}-sts",
        config={"corpus": result["corpus"], "seed": result["seed"], "job_type": "sts"},
        directory=str(cfg.out_dir),
        mode=w.get("mode"),
        enabled=bool(w.enabled),
    ) as run:
        if run is not None:
            run.summary.update(job_summary(result))
