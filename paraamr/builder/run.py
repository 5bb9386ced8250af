"""Run the corpus builder from a Hydra config (``conf/build.yaml``); used by
:func:`paraamr.tables.table1.build_corpus` (``experiments/build.py``) and the tests. Table 1
is written by the table layer (:mod:`paraamr.tables.table1`), not here."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from omegaconf import DictConfig

from paraamr.builder.pipeline import BuildConfig, Builder, build_shard, merge_build
from paraamr.shards import Shard
from paraamr.signature import Signature
from paraamr.utils import json_lines, write_json_atomic

__all__ = ["check_build", "make_builder", "run_build", "finish_build"]

log = logging.getLogger(__name__)

#: config group -> (the key naming its model folder, what the model is)
_MODEL_DIRS = {
    "stog": ("model_dir", "AMR parser"),
    "generator": ("model_dir", "AMR generator"),
    "lm": ("name", "perplexity LM"),
}


def _under(path: str, root: object) -> bool:
    return root is not None and Path(path).resolve().is_relative_to(Path(str(root)).resolve())


def check_build(cfg: DictConfig) -> None:
    """What a build needs, checked before any model loads, each failure one line: the input
    (given, a file, with a line that is not blank), then every configured model dir under
    ``tiny_dir`` or ``models_dir``, the error naming what makes it (``make tiny-models``,
    ``make models``). Hub names and other paths are left to the loaders."""
    from omegaconf import OmegaConf

    from paraamr.builder.inputs import guess_input_format, iter_all_lines
    from paraamr.builder.models import (
        MODELS_REMEDY,
        TINY_REMEDY,
        TRAINED_REMEDY,
        check_model_dir,
    )
    from paraamr.corpus.readers import check_corpus_path, require_records
    from paraamr.errors import ConfigError

    if OmegaConf.is_missing(cfg, "input") or not str(cfg.input or "").strip():
        raise ConfigError(
            "input= is required: the sentences (or PENMAN graphs) to build from, e.g. "
            "python experiments/build.py input=sentences.txt"
        )
    path = str(cfg.input)
    check_corpus_path(path)
    fmt = cfg.get("input_format") or guess_input_format(path)
    lines = (n for n, text, bad in iter_all_lines(path) if bad or text.strip())
    require_records(lines, path, "graphs" if fmt == "penman" else "sentences")
    for group, (key, what) in _MODEL_DIRS.items():
        node = cfg.get(group)
        where = None if node is None or node.get("_target_") is None else node.get(key)
        if where is None:
            continue
        if _under(str(where), cfg.get("tiny_dir")):
            check_model_dir(str(where), what, TINY_REMEDY)
        elif _under(str(where), cfg.get("models_dir")):
            check_model_dir(str(where), what, MODELS_REMEDY)
        elif cfg.get("amr_model") is not None and str(where) == str(cfg.amr_model):
            check_model_dir(str(where), what, TRAINED_REMEDY)


def _maybe(node):
    from hydra.utils import instantiate

    return None if node is None or node.get("_target_") is None else instantiate(node)


def make_builder(cfg: DictConfig) -> Builder:
    """Load the models once and wire the stages."""
    from hydra.utils import instantiate

    from paraamr.corpus.filters import ACCEPTABLE, similarity_floor

    floor = similarity_floor(cfg.settings.get("min_similarity"))  # checked before models load
    similarity = _similarity(cfg.get("similarity"))
    if floor == ACCEPTABLE:  # the cosine where ParaBank-Eval's judges are split half and half
        floor = _acceptable_floor(cfg, similarity)
    bcfg: BuildConfig = instantiate(cfg.settings, min_similarity=floor)
    return Builder(
        generator=_maybe(cfg.generator),
        stog=_maybe(cfg.stog),
        lm=_maybe(cfg.lm),
        cfg=bcfg,
        source=str(cfg.input),
        similarity=similarity,
    )


def _acceptable_floor(cfg: DictConfig, similarity) -> float:
    """``filter.min_similarity=acceptable``: the calibrated acceptable similarity of the build's
    encoder (:func:`paraamr.validity.acceptable.calibrate_parabank_eval`, default settings, once
    per machine)."""
    from paraamr.datadir import data_path
    from paraamr.errors import ConfigError
    from paraamr.validity.acceptable import MACHINE_CACHE, calibrate_parabank_eval

    if similarity is None:
        raise ConfigError("filter.min_similarity=acceptable needs a similarity encoder")
    data = data_path(cfg.paths.data_dir)
    res = calibrate_parabank_eval(data, similarity.encoder, similarity.label, cache=MACHINE_CACHE)
    log.info("filter.min_similarity=acceptable: %s", res.signature())
    return float(res.threshold)


def _similarity(node):
    """The builder's similarity scorer (:class:`paraamr.metrics.pairwise.Similarity`: the
    ``similarity`` group's encoder and its signature label), ``None`` without the group
    (``~similarity``)."""
    from paraamr.metrics.pairwise import Similarity
    from paraamr.metrics.semantic import similarity_label

    encoder = _maybe(node)
    return None if encoder is None else Similarity(encoder, similarity_label(node))


def finish_build(out_dir: str, num_shards: int) -> dict:
    """Merge shards into ``corpus.jsonl`` (+ ``corpus.rejects.jsonl``); returns and writes
    (``build_summary.json``) the Table 1 statistics, the counts and the signature."""
    from paraamr.builder.stats import table1_stats

    out = Path(out_dir)
    totals = merge_build(out, num_shards, out / "corpus.jsonl")
    stats = table1_stats(row for _, row in json_lines(out / "corpus.jsonl"))
    if totals.get("parsed"):  # parsed here: the share of parsed sources longer than it reads
        stats["sources_cut"] = round(100 * totals.get("parse_cut", 0) / totals["parsed"], 2)
    prog = json.loads((out / f"{Shard(0, num_shards).name}.progress.json").read_text())
    sig = Signature(prog["settings"]["builder"])
    summary = {"table1": stats, "counts": totals, "signature": sig}
    write_json_atomic(out / "build_summary.json", summary, sort_keys=False)
    return summary


def run_build(cfg: DictConfig) -> dict:
    """Build (one shard, or all) and, when merging, return :func:`finish_build`'s summary
    (else the shard's state)."""
    logging.getLogger("penman").setLevel(logging.WARNING)  # penman logs every graph at INFO
    # a parsed graph that states one edge twice is read with the edge once; penman says so per
    # edge and per re-focused copy (hundreds of lines for 400 parsed sentences)
    logging.getLogger("penman.layout").setLevel(logging.ERROR)
    check_build(cfg)
    builder = make_builder(cfg)
    state = build_shard(
        builder,
        cfg.input,
        cfg.out_dir,
        input_format=cfg.input_format,
        shard=cfg.shard,
        num_shards=cfg.num_shards,
        limit=cfg.limit,
        progress=cfg.progress,
    )
    merge = cfg.merge if cfg.merge != "auto" else cfg.num_shards == 1
    if merge:
        return finish_build(cfg.out_dir, cfg.num_shards)
    return state
