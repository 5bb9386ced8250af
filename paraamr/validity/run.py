"""``make validity``: read a human judgement file, compute every measure, analyse, report.

Used by ``experiments/validity.py`` (Hydra, ``conf/validity.yaml``) and the tests.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from paraamr.validity.judgements import Item, JudgementSet, read_judgements

__all__ = ["judged_items", "default_judgements", "run_validity"]

log = logging.getLogger(__name__)


def default_judgements(data_dir: str | None) -> Path:
    """ParaBank-Eval under the data dir (``paths.data_dir``, resolved by the entry point)."""
    from paraamr.datadir import data_path

    return data_path(data_dir, "paraphrase", "parabank-eval")


def judged_items(js: JudgementSet, limit: int | None = None) -> tuple[list[Item], dict]:
    """The items that take part (copies of the source excluded), first ``limit`` sources only
    when given; with counts of what was left out."""
    items = js.items
    if limit is not None:
        keep = set(list(dict.fromkeys(it.source_id for it in items))[:limit])
        items = [it for it in items if it.source_id in keep]
    kept = [it for it in items if not it.is_copy]
    return kept, {"items_read": len(items), "copies_excluded": len(items) - len(kept)}


def _scorer(cfg: DictConfig):
    p = cfg.perplexity
    if not p.model:
        return None
    from paraamr.lms import load_scorer
    from paraamr.lms.cache import CachedScorer

    scorer = load_scorer(
        p.model,
        batch_size=p.batch_size,
        device=p.device,
        max_tokens=p.get("max_tokens"),
        dtype=p.get("dtype"),
    )
    return CachedScorer(scorer, p.cache) if p.cache else scorer


def run_validity(cfg: DictConfig) -> dict:
    """Run the whole report; returns the result dict (also written to ``out_dir``)."""
    from hydra.utils import instantiate

    from paraamr.metrics.semantic import similarity_label
    from paraamr.validity.analyse import analyse
    from paraamr.validity.measures import compute_measures
    from paraamr.validity.report import log_wandb, write_report

    t0 = time.perf_counter()
    if cfg.get("threads"):
        import torch

        torch.set_num_threads(int(cfg.threads))
    path = Path(cfg.judgements) if cfg.judgements else default_judgements(cfg.paths.data_dir)
    js = read_judgements(path, cfg.layout, cfg.on_error)
    items, left_out = judged_items(js, cfg.limit)
    log.info("%s: %d judged pairs (%s)", path, len(items), left_out)
    timing = {"read": time.perf_counter() - t0}

    t = time.perf_counter()
    encoder = instantiate(cfg.similarity)
    parser = instantiate(cfg.parser)
    scorer = _scorer(cfg)
    timing["load_models"] = time.perf_counter() - t
    data = js.describe() + (f",limit={cfg.limit}" if cfg.limit else "")
    measures = compute_measures(
        items,
        encoder=encoder,
        parser=parser,
        scorer=scorer,
        similarity_name=similarity_label(cfg.similarity),
        data=data,
        ted_variant=cfg.ted.variant,
        ted_kernel=cfg.ted.kernel,
        ted3_depth=cfg.ted.depth3,
        lowercase=cfg.metrics.lowercase,
        similarity_batch_size=cfg.metrics.similarity_batch_size,
        parse_batch_size=cfg.metrics.parse_batch_size,
        lm_batch_size=cfg.perplexity.batch_size,
    )
    timing.update({f"measure_{k}": v for k, v in measures.seconds.items()})

    t = time.perf_counter()
    result = analyse(
        items,
        measures,
        n_boot=cfg.n_boot,
        n_boot_kendall=cfg.n_boot_kendall,
        n_splits=cfg.n_splits,
        seed=cfg.seed,
        keeps=list(cfg.keep_fluent),
        paper_thresholds=list(cfg.paper_thresholds),
        n_examples=cfg.n_examples,
    )
    timing["analyse"] = time.perf_counter() - t
    result["data"] = {**js.summary(), **left_out, "description": data}
    result["signatures"] = measures.signatures
    result["measure_failures"] = dict(measures.failures)
    if scorer is not None and hasattr(scorer, "n_cached"):
        result["perplexity_cache"] = {
            "path": str(scorer.path),
            "sentences_from_cache": scorer.n_cached,
            "sentences_scored": scorer.n_scored,
        }
    result["config"] = OmegaConf.to_container(cfg, resolve=True)

    t = time.perf_counter()
    paths = write_report(result, items, measures, cfg.out_dir)
    timing["report"] = time.perf_counter() - t
    timing["total"] = time.perf_counter() - t0
    result["timing_s"] = {k: round(v, 2) for k, v in timing.items()}
    write_report(result, items, measures, cfg.out_dir, plots=False)  # with the timings
    wb = OmegaConf.to_container(cfg.wandb, resolve=True)
    if wb.get("enabled", True):
        log_wandb(result, paths, wb, cfg.out_dir)
    result["paths"] = {k: str(v) for k, v in paths.items()}
    return result
