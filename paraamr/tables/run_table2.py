"""Run Table 2 from a Hydra config (``conf/table2.yaml``); called by ``experiments/table2.py``
and by the tests in-process."""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.specs import in_data_dir, parse_corpus_specs, with_built_runs
from paraamr.corpus.subset import common_subset
from paraamr.datadir import data_path
from paraamr.diversity.scoring import MetricConfig, score_records
from paraamr.errors import DataNotFoundError, ParaAMRError
from paraamr.metrics.semantic import similarity_label
from paraamr.metrics.signature import metric_signature
from paraamr.shards import Shard
from paraamr.tables.render import run_kind, wandb_rows, write_table
from paraamr.tables.table2 import (
    TABLE2_COLUMNS,
    corpus_dir,
    default_corpora,
    plot_source_distributions,
    shard_of,
    subset_stream,
    table2_layout,
    table2_row,
)
from paraamr.tracking import log_table, wandb_run

__all__ = ["score_table2", "finish_table2", "run_table2"]

log = logging.getLogger(__name__)


def _specs(cfg: DictConfig):
    """(corpus specs, data label for signatures, human description of the data): ``corpora``,
    else the ParaBank-Eval defaults; then ``built_corpora`` (the built presets' rows) and
    ``extra_corpora``. A name given twice is an error, so extra rows never replace built ones."""
    extra = [
        spec
        for key in ("built_corpora", "extra_corpora")
        if cfg.get(key)
        for spec in parse_corpus_specs(str(cfg[key]))
    ]
    if cfg.corpora:
        specs, label, where = parse_corpus_specs(str(cfg.corpora)), "user-corpora", "user corpora"
    else:
        data = data_path(cfg.paths.data_dir)
        where = f"ParaBank-Eval sample ({data}/paraphrase/parabank-eval)"
        specs, label = default_corpora(data), "ParaBank-Eval-sample"
        if extra:
            label, where = f"{label}+user-corpora", f"{where} and user corpora"
    specs = specs + extra
    if len({s.name for s in specs}) != len(specs):
        raise ParaAMRError("corpus names must be unique (corpora, built_corpora, extra_corpora)")
    specs = with_built_runs(in_data_dir(specs, lambda: data_path(cfg.paths.data_dir)))
    return specs, label, where


def score_table2(cfg: DictConfig) -> tuple[list[str], str]:
    """Score this job's shard of every corpus; returns the corpus names and a data description."""
    from hydra.utils import instantiate

    specs, data_label, data_description = _specs(cfg)
    mcfg: MetricConfig = instantiate(cfg.metrics)
    lowercase_keys = bool(cfg.get("lowercase_keys", False))
    keys = common_subset(specs, cfg.on_error, cfg.progress, lowercase_keys)
    if len(keys) == 0:
        raise DataNotFoundError("the corpora have no source sentence in common: nothing to compare")
    parser = instantiate(cfg.parser)
    encoder = instantiate(cfg.similarity)
    sig = metric_signature(
        similarity=similarity_label(cfg.similarity),
        parser_sig=parser.signature(),
        bleu=mcfg.bleu,
        ted_variant=mcfg.ted_variant,
        ted_kernel=mcfg.ted_kernel,
        ted3_depth=mcfg.ted3_depth,
        data=data_label + (",keys:lowercase" if lowercase_keys else ""),
        lowercase=mcfg.lowercase,
        self_bleu=mcfg.self_bleu,
    )
    total = len(keys) if not cfg.limit else min(len(keys), int(cfg.limit))
    total = (total - cfg.shard + cfg.num_shards - 1) // cfg.num_shards
    for spec in specs:
        skips = SkipLog(cfg.on_error)
        stream = subset_stream(spec, keys, skips, cfg.limit, lowercase_keys)
        records = shard_of(stream, cfg.shard, cfg.num_shards)
        res = score_records(
            records,
            parser=parser,
            encoder=encoder,
            cfg=mcfg,
            out_dir=corpus_dir(cfg.out_dir, spec.name),
            shard=Shard(cfg.shard, cfg.num_shards),
            signature=sig,
            skips=skips,
            progress=cfg.progress,
            total=total,
            desc=f"table2 {spec.name}",
        )
        log.info(
            "%s shard %d/%d: %d sources, %d pairs, %d identical dropped, %d skipped",
            spec.name,
            cfg.shard,
            cfg.num_shards,
            res.n_sources,
            res.n_pairs,
            res.dropped_identical,
            res.skips["total"],
        )
    return [s.name for s in specs], data_description


def finish_table2(
    out_dir: str,
    names: list[str],
    *,
    meta: dict,
    bootstrap: int = 0,
    seed: int = 0,
    wandb_cfg: dict | None = None,
) -> dict:
    """Merge shards into rows, write table2.{md,csv,json} and log to W&B."""
    rows = [table2_row(out_dir, n, bootstrap=bootstrap, seed=seed) for n in names]
    meta = {"run_kind": run_kind(rows[0]["signature"]), **meta}
    layout = table2_layout(rows)
    paths = write_table(layout, rows, out_dir, meta)
    figure = plot_source_distributions(out_dir, names, rows[0]["signature"])
    paths["figure"] = figure[0]
    wb = wandb_cfg or {"enabled": False}
    if wb.get("enabled", True):
        for r in rows:
            with wandb_run(
                project=wb["project"],
                group=wb["group"],
                name=r["dataset"],
                config={**meta, "dataset": r["dataset"]},
                directory=out_dir,
                mode=wb.get("mode"),
            ) as run:
                if run is not None:
                    run.summary.update({k: v for k, v in r.items() if k in TABLE2_COLUMNS})
        cols, table_rows = wandb_rows(layout, rows)
        with wandb_run(
            project=wb["project"],
            group=wb["group"],
            name="table2-comparison",
            config=meta,
            directory=out_dir,
            mode=wb.get("mode"),
        ) as run:
            log_table(run, "table2", cols, table_rows)
    print(Path(paths["md"]).read_text())
    return {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}}


def run_table2(cfg: DictConfig) -> dict:
    """Score, then (for unsharded runs) merge and write the tables."""
    names, data_description = score_table2(cfg)
    merge = cfg.merge if cfg.merge != "auto" else cfg.num_shards == 1
    if not merge:
        return {"names": names}
    meta = {
        "description": f"{data_description}; similarity={cfg.similarity.name}; "
        f"parser={cfg.parser._target_.rsplit('.', 1)[1]}; TED={cfg.ted.variant}; "
        f"BLEU={cfg.metrics.bleu}; limit={cfg.limit}",
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
    return finish_table2(
        cfg.out_dir,
        names,
        meta=meta,
        bootstrap=cfg.bootstrap,
        seed=cfg.seed,
        wandb_cfg=OmegaConf.to_container(cfg.wandb),
    )
