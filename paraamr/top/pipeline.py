"""The TOP synthetic-data pipeline (Tran & Tan), one training set at a time.

For a training set ``T`` (the full train set, or one low-resource subsample with one
utterance per template), under ``<out_dir>/<setting>/``:

1. ``generator/``: fine-tune the generator on ``(encoded template, encoded tree)`` pairs of
   ``T`` (validation pairs from the eval set), best by validation perplexity;
2. ``generate/``: 5 top-p samples per template, templates uniform over the seen ones
   (:func:`~paraamr.top.pairs.sampling_plan`), sharded and resumable; invalid trees removed
   and counted, duplicates of training trees counted (:func:`~paraamr.top.pairs.collect_samples`);
3. ``ap/``: the auxiliary parser, trained on the real ``T`` (utterance -> tree);
4. ``filter/``: keep a synthetic tree only if the auxiliary parser parses its utterance back
   to it (sharded, resumable);
5. target parsers: *real* is the auxiliary parser itself (the same model trained on the same
   data, as in the paper's "Real" rows), *real + syn* is trained on ``T`` + the kept trees
   (``target_syn/``); when the filter keeps nothing, *real + syn* would be the same training
   as *real* (same data, seed and settings), so the auxiliary parser is reused, not retrained;
6. ``eval_*``: exact match on the test set, overall and per template-frequency bucket of ``T``.

``multitask: true`` trains one model on both tasks (generator pairs + parser pairs of ``T``,
``multitask/``): it is the generator, the auxiliary parser and the *real* parser; *real + syn*
is trained the same way with the kept trees' parser pairs added, so the two parsers differ
only in the synthetic pairs.

Every stage reuses its finished outputs, so a rerun after a crash continues where it stopped.
``setting.json`` holds counts, scores and a signature.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from paraamr.errors import ConfigError
from paraamr.metrics.aggregate import mean_std
from paraamr.signature import Signature, config_digest, versions_field
from paraamr.top.encoding import LabelVocab
from paraamr.top.evaluate import exact_match_report, low_resource_subsamples
from paraamr.top.pairs import collect_samples, generator_pairs, parser_pairs, sampling_plan
from paraamr.top.templates import template_counts
from paraamr.top.trees import Node, depth, to_string, utterance
from paraamr.utils import write_json_atomic

__all__ = ["run_setting", "run", "signature"]

log = logging.getLogger(__name__)
SETTING_FILE = "setting.json"


def signature(cfg: DictConfig, role: str) -> Signature:
    """``top:<role>|model:<backbone>|lr:..|steps:..|...`` naming how a number was computed."""
    m = cfg.model
    steps = (cfg.stages.get(role) or {}).get("trainer", {}).get("max_steps", cfg.trainer.max_steps)
    return Signature.build(
        ("top", role),
        ("model", m.model_name_or_path),
        ("arch", m.get("arch", "auto")),
        ("freeze", m.get("freeze_layers")),
        ("constrained", m.get("constrained", False)),
        ("multitask", cfg.get("multitask", False)),
        ("label_tokens", m.add_label_tokens),
        ("lr", m.lr),
        ("warmup", m.warmup_steps),
        ("steps", steps),
        ("batch", cfg.data.batch_size),
        # named only where set, so the signatures of runs before these options stay the same
        *([("grouped", True)] if cfg.data.get("group_by_length", False) else []),
        *([("loss", norm)] if (norm := cfg.data.get("loss_norm", "batch")) != "batch" else []),
        ("top_p", cfg.generation.top_p),
        ("k", cfg.generation.samples_per_template),
        ("beams", cfg.parsing.num_beams),
        ("seed", cfg.seed),
        ("versions", versions_field()),
    )


def _parser_pairs(trees: Sequence[Node], encoded: bool) -> list[tuple[str, str]]:
    return parser_pairs(trees, encoded=encoded)


def _evaluate(
    module, test: Sequence[Node], counts, out: Path, cfg: DictConfig, vocab, settings: dict
) -> dict:
    from paraamr.top.stages import parse_utterances

    p = cfg.parsing
    preds = parse_utterances(
        module,
        [utterance(t) for t in test],
        out,
        settings=settings,
        vocab=vocab,
        encoded=bool(p.encoded_targets),
        num_beams=int(p.num_beams),
        chunk_size=int(p.chunk_size),
        progress=bool(cfg.progress),
        desc="eval",
    )
    rep = exact_match_report(preds, list(test), counts)
    rows = [{"gold": to_string(g), "pred": pr} for g, pr in zip(test, preds, strict=True)]
    (out / "predictions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return {k: v.as_dict() for k, v in rep.items()}


def _inspection(
    plan_rows: list[dict], kept_keys: set[int], train_counts, path: Path, per_template: int
) -> None:
    by_t: dict[str, list[dict]] = {}
    for r in plan_rows:
        by_t.setdefault(r["template"], []).append(r)
    lines = ["# Synthetic trees per template (generator samples; AP filter verdict)", ""]
    jl = []
    for tmpl, rows in by_t.items():
        lines.append(f"## `{tmpl}` (train frequency {train_counts.get(tmpl, 0)})")
        lines.append("")
        for r in rows[:per_template]:
            verdict = r["status"] if r["k"] not in kept_keys else "kept"
            lines.append(f"- [{verdict}] `{r.get('tree') or r['output']}`")
        lines.append("")
        jl.append({"template": tmpl, "samples": rows[:per_template]})
    path.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.with_suffix(".jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in jl), encoding="utf-8"
    )


def run_setting(
    cfg: DictConfig,
    train: Sequence[Node],
    val: Sequence[Node],
    test: Sequence[Node],
    work: str | Path,
    name: str,
) -> dict[str, Any]:
    """Run steps 1-6 of the module docstring for one training set; returns the summary."""
    from paraamr.top.module import TopModule
    from paraamr.top.stages import filter_samples, generate_samples
    from paraamr.top.train import train_top_model

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    done = work / SETTING_FILE
    if done.exists():
        return json.loads(done.read_text(encoding="utf-8"))
    train = list(train)
    vocab = LabelVocab.from_trees(train)
    labels = vocab.labels
    cap = max((depth(t) for t in train), default=None)  # model.max_depth: auto
    counts = template_counts(train)
    enc = bool(cfg.parsing.encoded_targets)
    g, p = cfg.generation, cfg.parsing
    val_g = generator_pairs(val)
    val_p = _parser_pairs(val, enc)

    multitask = bool(cfg.get("multitask", False))
    # 1-2 generator and samples
    if multitask:
        gen = train_top_model(
            cfg,
            "parser",
            generator_pairs(train) + _parser_pairs(train, enc),
            val_g + val_p,
            labels,
            work / "multitask",
            name=f"{name}-multitask",
            max_depth=cap,
        )
    else:
        gen = train_top_model(
            cfg,
            "generator",
            generator_pairs(train),
            val_g,
            labels,
            work / "generator",
            name=f"{name}-generator",
            max_depth=cap,
        )
    plan = sampling_plan(
        train, int(g.samples_per_template), g.get("n_templates"), seed=int(cfg.seed)
    )
    gmod = TopModule.from_saved(gen["model_dir"])
    outputs = generate_samples(
        functools.partial(gmod.generate, max_new_tokens=g.get("max_new_tokens")),
        plan,
        work / "generate",
        settings={"model": gen["model_dir"], "seed": int(cfg.seed)},
        top_p=float(g.top_p),
        chunk_size=int(g.chunk_size),
        num_shards=int(g.num_shards),
        shard=g.get("shard"),
        progress=bool(cfg.progress),
    )
    if outputs is None:
        raise SystemExit(
            f"generation shard {g.shard} of {g.num_shards} done; rerun with "
            "generation.shard=null to merge and continue"
        )
    del gmod
    kept, report = collect_samples(
        plan,
        outputs,
        vocab=vocab,
        train=train,
        drop_train_duplicates=bool(g.drop_train_duplicates),
        drop_synthetic_duplicates=bool(g.drop_synthetic_duplicates),
    )
    synthetic = [t for _, t in kept]

    # 3-4 auxiliary parser and filter
    if multitask:
        ap = gen
    else:
        ap = train_top_model(
            cfg,
            "parser",
            _parser_pairs(train, enc),
            val_p,
            labels,
            work / "ap",
            name=f"{name}-ap",
            max_depth=cap,
        )
    apmod = TopModule.from_saved(ap["model_dir"])
    pkw = dict(
        vocab=vocab,
        encoded=enc,
        num_beams=int(p.num_beams),
        chunk_size=int(p.chunk_size),
        progress=bool(cfg.progress),
    )
    if bool(cfg.filter.enabled):
        filt = filter_samples(
            apmod, synthetic, work / "filter", settings={"model": ap["model_dir"]}, **pkw
        )
        kept_trees, kept_idx, fsum = filt.kept, filt.kept_index, filt.summary()
    else:
        kept_trees, kept_idx, fsum = synthetic, list(range(len(synthetic))), None
    kept_keys = set(kept_idx)  # positions in ``kept``
    # inspection: every plan row with its decoded tree and fate
    status = {}
    for i, (req, tree) in enumerate(kept):
        status[id(req)] = (i, to_string(tree))
    rows = []
    kept_plan_k = set()
    for k, (req, out) in enumerate(zip(plan, outputs, strict=True)):
        hit = status.get(id(req))
        row = {
            "k": k,
            "template": req.template,
            "sample": req.sample,
            "output": out,
            "tree": hit[1] if hit else None,
            "status": "invalid" if hit is None else "dropped_by_ap",
        }
        if hit is not None and hit[0] in kept_keys:
            kept_plan_k.add(k)
        rows.append(row)
    _inspection(rows, kept_plan_k, counts, work / "samples", int(cfg.inspect_per_template))
    (work / "synthetic.txt").write_text(
        "".join(to_string(t) + "\n" for t in kept_trees), encoding="utf-8"
    )

    # 5-6 target parsers and evaluation
    ev = {}
    ev["real"] = _evaluate(
        apmod, test, counts, work / "eval_real", cfg, vocab, {"model": ap["model_dir"]}
    )
    del apmod
    if kept_trees:
        extra = generator_pairs(train) if multitask else []
        tgt = train_top_model(
            cfg,
            "parser",
            extra + _parser_pairs(train, enc) + _parser_pairs(kept_trees, enc),
            val_g + val_p if multitask else val_p,
            labels,
            work / "target_syn",
            name=f"{name}-target-syn",
            max_depth=cap,
        )
        tmod = TopModule.from_saved(tgt["model_dir"])
        ev["real+syn"] = _evaluate(
            tmod, test, counts, work / "eval_syn", cfg, vocab, {"model": tgt["model_dir"]}
        )
    else:  # real + nothing = the auxiliary parser's data, seed and settings: the same training
        log.warning("%s: no synthetic tree kept; the +syn parser is the Real parser", name)
        tgt = {**ap, "reused": "ap (no synthetic tree kept)"}
        ev["real+syn"] = ev["real"]
    result = {
        "name": name,
        "work": str(work),
        "train": len(train),
        "templates": len(counts),
        "labels": len(labels),
        "test": len(test),
        "generation": report.as_dict(),
        "filter": fsum,
        "synthetic_kept": len(kept_trees),
        "samples": {"real": len(train), "real+syn": len(train) + len(kept_trees)},
        "exact_match": ev,
        "models": {"generator": gen, "ap": ap, "target_syn": tgt},
        "signature": {r: signature(cfg, r) for r in ("generator", "parser")},
    }
    write_json_atomic(done, result, sort_keys=False)
    return result


def _mean_std(xs: list[float]) -> dict[str, float | None]:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"mean": None, "std": None, "n": 0}
    mean, std = mean_std(xs, digits=None)
    return {"mean": mean, "std": std, "n": len(xs)}


def run(cfg: DictConfig) -> dict[str, Any]:
    """Run the configured setting (``full`` or ``low_resource``); writes ``results.json`` (the
    job record, :class:`paraamr.results.JobResult`; its signature is the target parser's with
    the run's name and setting) and returns it."""
    from hydra.utils import instantiate

    from paraamr.results import JobResult, Stopwatch

    clock = Stopwatch()
    d = instantiate(cfg.data)
    train, val, test = d.load("train"), d.load("val"), d.load("test")
    if not train or not test:
        raise ConfigError("data.train and data.test must name non-empty TOP files")
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mode = cfg.setting
    runs: list[dict] = []
    if mode == "full":
        runs.append(run_setting(cfg, train, val, test, out / "full", f"{cfg.name}-full"))
    elif mode == "low_resource":
        lr = cfg.low_resource
        subs = low_resource_subsamples(train, int(lr.subsamples), seed=int(cfg.seed))
        which = lr.get("only")
        for k, idx in enumerate(subs):
            if which is not None and k not in set(which):
                continue
            sub = [train[i] for i in idx]
            runs.append(
                run_setting(cfg, sub, val, test, out / f"low_resource_{k}", f"{cfg.name}-low{k}")
            )
    else:
        raise ConfigError(f"setting must be full or low_resource, got {mode!r}")
    if not runs:
        raise ConfigError(f"low_resource.only={list(which)} selects none of the subsamples")
    summary: dict[str, Any] = {
        "name": cfg.name,
        "setting": mode,
        "data": {k: str(d.path(k)) for k in ("train", "val", "test")},
        "skipped": d.skipped,
        "n": {"train": len(train), "val": len(val), "test": len(test)},
        "runs": runs,
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
    agg = {}
    for key in ("real", "real+syn"):
        agg[key] = {
            b: _mean_std([r["exact_match"][key][b]["exact_match"] for r in runs])
            for b in runs[0]["exact_match"][key]
        }
        agg[key]["samples"] = _mean_std([r["samples"][key] for r in runs])
    summary["aggregate"] = agg
    # the parser's settings readable, the whole configuration (data, filter, ...) as a digest
    digest = config_digest(summary["config"])
    sig = signature(cfg, "parser").with_fields(name=cfg.name, setting=mode, config=digest)
    files = {r["name"]: r["work"] for r in runs}  # each training set's folder
    record = JobResult("top", int(cfg.seed), str(sig), summary, files, clock.seconds())
    record.write(out)
    summary = record.to_dict()
    _log_wandb(cfg, summary)
    return summary


def _log_wandb(cfg: DictConfig, summary: dict) -> None:
    """One summary run in W&B group ``top`` (offline unless ``WANDB_MODE`` says otherwise)."""
    from paraamr.tracking import wandb_run

    w = cfg.logger.get("wandb")
    if w is None:
        return
    flat = {f"{k}/{b}": v["mean"] for k, d in summary["aggregate"].items() for b, v in d.items()}
    with wandb_run(
        project=w.project,
        group="top",
        name=f"{cfg.name}-summary",
        config=summary["config"],
        directory=str(cfg.out_dir),
        mode=w.get("mode"),
        enabled=bool(w.get("enabled", True)),
    ) as run:
        if run is not None:
            run.log(flat)
