"""Table 5 of the ParaAMR paper: SimCSE trained on each paraphrase corpus, evaluated on STS.

One job = one (corpus, seed): train (:func:`paraamr.simcse.train.train`), evaluate the best model
on the STS suite (:func:`paraamr.sts.evaluate_sts`), write ``<out_dir>/results.json``. The job with
``train_corpus=none`` evaluates the untrained encoder (row "none"). :func:`gather_rows` collects the
jobs of a sweep into Table 5 rows (mean ± std over seeds).

>>> rows = gather_rows([
...     {"corpus": "A", "seed": 0, "sts": {"avg": {"pearson": 70.0, "spearman": 60.0},
...      "years": {"STS12": {"pearson": 70.0, "spearman": 60.0, "n": 5}}}},
...     {"corpus": "A", "seed": 1, "sts": {"avg": {"pearson": 72.0, "spearman": 62.0},
...      "years": {"STS12": {"pearson": 72.0, "spearman": 62.0, "n": 5}}}}])
>>> rows[0]["dataset"], rows[0]["n_seeds"], rows[0]["spearman_mean"], rows[0]["spearman_std"]
('A', 2, 61.0, 1.4142)
"""

from __future__ import annotations

import json
import logging
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from paraamr.errors import TrainingError

__all__ = ["subsample_suite", "run_job", "gather_rows", "load_results"]

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

    from paraamr.data import resolve_data_dir

    p = cfg.data.path
    if p and not Path(p).is_absolute() and not Path(p).exists():
        with open_dict(cfg):
            cfg.data.path = str(resolve_data_dir(cfg.get("data_dir")) / p)


def run_job(cfg) -> dict:
    """Train (unless the corpus is ``none``), evaluate on STS, write ``results.json``."""
    from paraamr.data import resolve_data_dir
    from paraamr.metrics.semantic import load_encoder
    from paraamr.sts import evaluate_sts, load_sts_suite, sts_signature

    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    suite = load_sts_suite(
        resolve_data_dir(cfg.get("data_dir")), layout=cfg.sts.layout, include=tuple(cfg.sts.include)
    )
    suite = subsample_suite(suite, cfg.sts.max_pairs_per_set, seed=0)
    result: dict = {"corpus": cfg.corpus, "seed": int(cfg.seed)}
    if cfg.corpus == "none":
        model_path = str(cfg.model.model_name_or_path)
    else:
        from paraamr.simcse.train import train

        _resolve_data_path(cfg)
        trained = train(cfg)
        if not trained.get("best_model"):
            raise TrainingError(f"training wrote no best model (see {out}); cannot evaluate")
        result.update({k: trained[k] for k in ("best_val", "steps") if k in trained})
        model_path = trained["best_model"]
    device = "cpu" if cfg.trainer.accelerator == "cpu" else None
    if cfg.corpus == "none":
        encoder = load_encoder(model_path, device)
    else:  # a fresh load: the cached loader would keep an older model saved at the same path
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(model_path, device=device)
    sts = evaluate_sts(encoder, suite, batch_size=cfg.sts.batch_size)
    sig = sts_signature(str(cfg.model.model_name_or_path), suite)
    if cfg.sts.max_pairs_per_set:
        sig = sig.with_fields(subsample=f"{cfg.sts.max_pairs_per_set}-pairs-per-set,seed0")
    if cfg.corpus != "none":
        sig = sig.with_fields(
            train=f"{cfg.corpus},{cfg.data.format}",
            steps=result.get("steps"),
            bs=cfg.data.batch_size,
            lr=cfg.model.lr,
            pool=cfg.model.pooling,
            T=cfg.model.temperature,
            ppl=f"<={cfg.data.max_perplexity}",
        )
    result.update({"model": model_path, "sts": sts, "signature": sig})
    (out / "results.json").write_text(json.dumps(result, indent=2))
    log.info("%s seed %s: STS avg spearman %.2f", cfg.corpus, cfg.seed, sts["avg"]["spearman"])
    return result


def load_results(root: str | Path) -> list[dict]:
    """Every ``results.json`` under ``root`` (a sweep's run folder)."""
    return [json.loads(p.read_text()) for p in sorted(Path(root).rglob("results.json"))]


def _mean_std(xs: list[float]) -> tuple[float, float]:
    return round(statistics.fmean(xs), 4), round(statistics.stdev(xs), 4) if len(xs) > 1 else 0.0


def gather_rows(results: Iterable[dict]) -> list[dict]:
    """Table 5 rows: per corpus, mean ± std over seeds of the STS12-16 average and per year."""
    by: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by[r["corpus"]].append(r)
    rows = []
    for corpus in sorted(by, key=lambda c: (c != "none", c)):
        rs = sorted(by[corpus], key=lambda r: r["seed"])
        pm, ps = _mean_std([r["sts"]["avg"]["pearson"] for r in rs])
        sm, ss = _mean_std([r["sts"]["avg"]["spearman"] for r in rs])
        per_year = {}
        for y in rs[0]["sts"]["years"]:
            m, s = _mean_std([r["sts"]["years"][y]["spearman"] for r in rs])
            per_year[y] = {"spearman_mean": m, "spearman_std": s}
        rows.append(
            {
                "dataset": corpus,
                "n_seeds": len(rs),
                "seeds": [r["seed"] for r in rs],
                "pearson_mean": pm,
                "pearson_std": ps,
                "spearman_mean": sm,
                "spearman_std": ss,
                "per_year": per_year,
                "signature": rs[0].get("signature", ""),
            }
        )
    return rows
