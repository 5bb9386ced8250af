"""Run Table 2 from a Hydra config (``conf/table2.yaml``); called by ``experiments/table2.py``
and by the tests in-process."""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.filters import ACCEPTABLE, similarity_floor
from paraamr.corpus.specs import in_data_dir, parse_corpus_specs, with_built_runs
from paraamr.corpus.subset import common_subset
from paraamr.datadir import data_path
from paraamr.diversity.scoring import MetricConfig, score_records
from paraamr.errors import DataNotFoundError, ParaAMRError
from paraamr.metrics.pairwise import similarity_field
from paraamr.metrics.semantic import similarity_label
from paraamr.metrics.signature import metric_signature
from paraamr.shards import Shard
from paraamr.tables.render import run_kind, wandb_rows, write_table
from paraamr.tables.table2 import (
    TABLE2_COLUMNS,
    corpus_dir,
    default_corpora,
    filtered_row,
    pair_columns,
    plot_source_distributions,
    shard_of,
    subset_stream,
    table2_layout,
    table2_row,
    with_acceptable,
)
from paraamr.tracking import log_table, wandb_run
from paraamr.validity.acceptable import JUDGEMENTS

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
    acceptable = acceptable_enabled(cfg)  # a missing judgement file stops the run here
    floor = similarity_floor((cfg.get("filter") or {}).get("min_similarity"))
    if floor == ACCEPTABLE and not acceptable:
        raise ParaAMRError(
            "filter.min_similarity=acceptable needs the acceptable share (acceptable.enabled "
            "true or auto, and ParaBank-Eval's judgements in the data folder)"
        )
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
    if acceptable:
        calibrated_threshold(cfg, encoder)
    return [s.name for s in specs], data_description


#: where a Table 2 run keeps its acceptable-similarity calibration
ACCEPTABLE_FILE = "acceptable.json"


def acceptable_enabled(cfg: DictConfig) -> bool:
    """Whether this run adds the acceptable share: ``acceptable.enabled`` is ``true`` (the
    judgements must be in the data folder), ``false``, or ``auto`` (when they are; a run
    without them says so in one log line and leaves the column out)."""
    acc = cfg.get("acceptable")
    mode = str(acc.get("enabled", "auto")).lower() if acc else "false"
    if mode not in ("true", "false", "auto"):
        raise ParaAMRError(f"acceptable.enabled must be true, false or auto, not {mode!r}")
    if mode == "false":
        return False
    try:
        found = (data_path(cfg.paths.data_dir) / JUDGEMENTS).is_file()
    except DataNotFoundError:
        found = False
    if not found and mode == "true":
        raise DataNotFoundError(
            f"acceptable.enabled=true needs ParaBank-Eval's judgements ({JUDGEMENTS} in the data "
            "folder, paths.data_dir); acceptable.enabled=false leaves the column out"
        )
    if not found:
        log.warning("no ParaBank-Eval judgements in the data folder: no acceptable share")
    return found


def calibrated_threshold(cfg: DictConfig, encoder):
    """The acceptable similarity under this run's encoder
    (:func:`paraamr.validity.acceptable.calibrate_parabank_eval`, once per machine), recorded in
    ``OUT/acceptable.json``."""
    from paraamr.utils import write_json_atomic
    from paraamr.validity.acceptable import MACHINE_CACHE, calibrate_parabank_eval

    acc = cfg.acceptable
    res = calibrate_parabank_eval(
        data_path(cfg.paths.data_dir),
        encoder,
        similarity_label(cfg.similarity),
        judge_cut=float(acc.judge_cut),
        bootstrap=int(acc.bootstrap),
        seed=int(cfg.seed),
        cache=MACHINE_CACHE,
        batch_size=int(cfg.metrics.similarity_batch_size),
    )
    write_json_atomic(Path(cfg.out_dir) / ACCEPTABLE_FILE, res.to_json(), sort_keys=False)
    return res


def finish_table2(
    out_dir: str,
    names: list[str],
    *,
    meta: dict,
    bootstrap: int = 0,
    seed: int = 0,
    wandb_cfg: dict | None = None,
    min_similarity: float | str | None = None,
    acceptable: bool = False,
) -> dict:
    """Merge shards into rows, write table2.{md,csv,json} and log to W&B. With
    ``acceptable``, every row gets the acceptable share (the threshold read from
    ``OUT/acceptable.json``, written by the scoring step); with ``min_similarity``, every
    corpus's row is followed by its row at that similarity filter (``"acceptable"``: at the
    acceptable similarity)."""
    threshold = None
    if acceptable:
        import json

        from paraamr.validity.acceptable import AcceptableThreshold

        path = Path(out_dir) / ACCEPTABLE_FILE
        if not path.is_file():
            raise DataNotFoundError(f"{path} not found: run the scoring step (merge=false) first")
        threshold = AcceptableThreshold.from_json(json.loads(path.read_text()))
    min_similarity = similarity_floor(min_similarity)
    label = min_similarity if min_similarity == ACCEPTABLE else None
    if min_similarity == ACCEPTABLE:
        if threshold is None:
            raise ParaAMRError(
                "filter.min_similarity=acceptable needs the acceptable share "
                "(acceptable.enabled and ParaBank-Eval's judgements in the data folder)"
            )
        min_similarity = threshold.threshold
    rows = []
    for n in names:
        row = table2_row(out_dir, n, bootstrap=bootstrap, seed=seed)
        if (
            threshold is not None
            and f"|sim:{similarity_field(threshold.encoder)}|" not in row["signature"]
        ):
            raise ParaAMRError(
                f"{path}: calibrated under {threshold.encoder!r}, but {n} was scored under "
                "another encoder (see its signature): rerun the scoring step"
            )
        pairs = pair_columns(out_dir, n) if threshold or min_similarity is not None else None
        if threshold is not None:
            row = with_acceptable(row, pairs, threshold, bootstrap, seed)
        rows.append(row)
        if min_similarity is not None:
            f = filtered_row(row, pairs, float(min_similarity), bootstrap, seed, label)
            if threshold is not None:
                keep = pairs["similarity"] >= float(min_similarity)
                f = with_acceptable(
                    f, {k: v[keep] for k, v in pairs.items()}, threshold, bootstrap, seed
                )
            rows.append(f)
        del pairs
    meta = {"run_kind": run_kind(rows[0]["signature"]), **meta}
    layout = table2_layout(rows)
    paths = write_table(layout, rows, out_dir, meta)
    figure = plot_source_distributions(out_dir, names, rows[0]["signature"])  # unfiltered
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
        min_similarity=(cfg.get("filter") or {}).get("min_similarity"),
        acceptable=acceptable_enabled(cfg),
    )
