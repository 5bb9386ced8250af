"""Train the AMR parser and generator from ``conf/amr.yaml`` and score them on the test split.

For each direction of ``cfg.directions`` (``parse``, ``generate``): the pairs of the fixed
split (:mod:`paraamr.amrlm.split`, :mod:`paraamr.amrlm.data`; plus, for the directions of
``data.silver_directions``, the silver pairs of the file ``data.silver`` or, without one, of
the run's own parse of ``data.silver_sentences`` once its parser is trained: :func:`own_silver`,
:mod:`paraamr.amrlm.silver`),
``cfg.model`` with the direction's own settings (``cfg.stages.<role>.model``) merged in,
(``cfg.eval`` likewise with ``cfg.stages.<role>.eval``: the parser scores in batches of 64),
trained by the shared trainer (:func:`paraamr.training.seq2seq_train.train_seq2seq`: the finite-loss
guard, best checkpoint by ``val/loss``, CSV + W&B loggers, ``curves.png``, resume from
``last.ckpt``, a finished role reused) into ``<out_dir>/<role>/model``; then the test scores
(:mod:`paraamr.amrlm.evaluate`). ``<out_dir>/scores.json`` holds both directions' scores,
times and signatures (a rerun of one direction keeps the other's entry);
``<role>/test_outputs.jsonl`` the answers. A finished model is not retrained: rerunning with
other decoding settings (``model.answer_cap``) re-scores it; with other training settings
(:func:`paraamr.training.seq2seq_train.fit_settings`: steps, rate, frozen blocks, batch,
grouping, loss) it is refused, so a signature never names settings its model was not trained with.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from paraamr.amrlm import ROLE_OF
from paraamr.errors import ConfigError
from paraamr.signature import Signature, versions_field

__all__ = ["train", "check_trained", "own_silver", "SCORES"]

log = logging.getLogger(__name__)

SCORES = "scores.json"


def signature(cfg: DictConfig, direction: str, silver: int = 0,
              precision: str = "fp32") -> Signature:  # fmt: skip
    """``amr:<direction>|model:…|data:…|steps:…|…|versions:…`` of one direction's scores;
    ``silver``: the silver graphs among its training pairs (``silver:<n>``); ``precision``:
    the decoding's (:attr:`paraamr.precision.Precision.label`), a field unless ``fp32``."""
    from paraamr.amrlm.module import cap_label, decode_label

    m = cfg.model
    steps = cfg.stages[ROLE_OF[direction]].trainer.max_steps
    stage = OmegaConf.merge(m, cfg.stages[ROLE_OF[direction]].get("model") or {})
    return Signature.build(
        ("amr", direction),
        ("model", m.model_name_or_path),
        ("freeze", stage.get("freeze_layers")),
        ("constrained", bool(m.get("constrained")) and direction == "parse"),
        ("cap", cap_label(m.get("answer_cap")) if direction == "parse" else "none"),
        ("stop_loops", stage.get("stop_loops") if direction == "parse" else None),
        ("no_repeat", stage.get("no_repeat_words") if direction == "generate" else None),
        ("lr", m.lr),
        ("steps", steps),
        ("batch", cfg.data.batch_size),
        ("grouped", bool(cfg.data.get("group_by_length", False))),
        *([("loss", norm)] if (norm := cfg.data.get("loss_norm", "batch")) != "batch" else []),
        ("refocus", cfg.data.refocus_copies if direction == "generate" else 0),
        ("graph", stage.get("graph_form", "serialized") if direction == "generate" else None),
        ("data", "lpp-1274/145/143+bio-400/50/50"),
        ("silver", silver),
        ("metric", "smatch-1.0.4" if direction == "parse" else "sacrebleu+cos(minilm)"),
        ("decode", decode_label(stage.get("num_beams", 1))),
        *([("precision", precision)] if precision != "fp32" else []),  # fp32 keeps old names
        ("seed", cfg.seed),
        ("versions", versions_field(("torch", "transformers", "sacrebleu"))),
    )


def _direction_config(cfg: DictConfig, direction: str) -> DictConfig:
    sub = OmegaConf.create(OmegaConf.to_container(cfg, resolve=False))
    with open_dict(sub):
        sub.model = OmegaConf.merge(sub.model, sub.stages[ROLE_OF[direction]].get("model") or {})
        sub.model.direction = direction
    return sub


def _stage_eval(cfg: DictConfig, role: str) -> DictConfig:
    """``cfg.eval`` with ``cfg.stages.<role>.eval`` merged over it; a key ``eval`` lacks is a
    :class:`~paraamr.errors.ConfigError` naming it (not a typo passed over or a merge error)."""
    stage = cfg.stages[role].get("eval") or {}
    unknown = sorted(set(stage) - set(cfg.eval))
    if unknown:
        raise ConfigError(
            f"stages.{role}.eval: unknown key(s) {unknown}; eval has {sorted(cfg.eval)}"
        )
    return OmegaConf.merge(cfg.eval, stage)


def _decoder(model_dir: str | Path, sub: DictConfig, evals: DictConfig) -> tuple[Any, Any]:
    """The saved module of ``model_dir`` decoding as ``sub.model`` says (a rerun re-scores a
    finished model with the config's decoding settings) in ``evals.dtype``; and its
    :class:`~paraamr.precision.Precision`."""
    from paraamr.amrlm.module import AMRModule

    module = AMRModule.from_saved(model_dir)
    module.set_decoding(sub.model.get("answer_cap"), sub.model.get("no_repeat_words"),
                        stop_loops=sub.model.get("stop_loops"),
                        num_beams=sub.model.get("num_beams", 1))  # fmt: skip
    return module, module.set_precision(evals.get("dtype"), "eval.dtype")


def own_silver(cfg: DictConfig, data: Any, root: Path, out: Path, evals: DictConfig) -> Any:
    """The run's own silver pairs (``data.silver_sentences``, the first ``data.silver_limit``;
    :func:`paraamr.amrlm.silver.silver_sentences`) parsed by the run's parser
    (``<out_dir>/parser/model``, the parser stage's decoding settings, batch and precision)
    into ``<out_dir>/silver/silver.amr`` beside ``sentences.txt``. The parse is the one of
    ``paraamr amr parse --output``: a killed run resumes after the last whole graph, a finished
    file is read again as it is. Returns the :class:`~paraamr.amrlm.silver.SilverData`, its
    summary naming the sentences (``offline:300``, a file's path) and how many were parsed.

    Raises:
        ConfigError: no trained parser in ``out_dir``.
    """
    from paraamr.amrlm.cli import parse_to_file
    from paraamr.amrlm.module import AMR_MODULE_FILE
    from paraamr.amrlm.silver import read_silver, silver_sentences
    from paraamr.errors import ConfigError
    from paraamr.utils import write_text_atomic

    parser_dir = out / "parser" / "model"
    if not (parser_dir / AMR_MODULE_FILE).is_file():
        raise ConfigError(f"data.silver_sentences: no parser in {parser_dir} to parse them; "
                          "train it first (directions=[parse, generate]) or set "
                          "data.silver_sentences=null for gold pairs only")  # fmt: skip
    sentences = silver_sentences(data.silver_sentences, root, data.silver_limit)
    where = out / "silver"
    where.mkdir(parents=True, exist_ok=True)
    write_text_atomic(where / "sentences.txt", "".join(s + "\n" for s in sentences))
    module, _ = _decoder(parser_dir, _direction_config(cfg, "parse"), evals)
    log.info("silver: parsing %d sentences (%s) with %s", len(sentences),
             data.silver_sentences, parser_dir)  # fmt: skip
    done = parse_to_file(module, sentences, where / "silver.amr", int(evals.batch_size),
                         name=str(where / "sentences.txt"),
                         progress=bool(cfg.get("progress", True)))  # fmt: skip
    limit = f":{data.silver_limit}" if data.silver_limit is not None else ""
    return replace(read_silver(where / "silver.amr"), source=f"{data.silver_sentences}{limit}",
                   parsed=done["lines"])  # fmt: skip


def check_trained(cfg: DictConfig) -> list[str]:
    """The model folders of ``cfg.out_dir``, one per direction of ``cfg.directions``, after
    checking that each holds a finished model trained with ``cfg``'s settings (steps, rate, frozen
    blocks, batch, grouping, loss: :func:`paraamr.training.seq2seq_train.finished_record`); trains
    nothing. A missing model or one trained otherwise is a :class:`ConfigError` naming the
    folder (``make amr-model`` runs it on a folder that exists, so an old recipe's models are
    never reused under a new one's name).
    """
    from paraamr.training.seq2seq_train import finished_record

    folders = []
    for direction in cfg.directions:
        role = ROLE_OF[direction]
        work = Path(cfg.out_dir) / role
        if finished_record(_direction_config(cfg, direction), role, work) is None:
            raise ConfigError(f"{work / 'model'}: no finished {role} model (train it into out_dir)")
        folders.append(str(work / "model"))
    return folders


def train(cfg: DictConfig) -> dict[str, Any]:
    """Train and score every direction of ``cfg.directions``; returns the scores."""
    from hydra.utils import instantiate

    from paraamr.amrlm.data import pairs_for
    from paraamr.amrlm.evaluate import evaluate_generator, evaluate_parser
    from paraamr.amrlm.silver import read_silver
    from paraamr.amrlm.split import load_split
    from paraamr.datadir import data_path
    from paraamr.training.seq2seq_train import train_seq2seq
    from paraamr.utils import measured_on, write_json_atomic

    logging.getLogger("penman").setLevel(logging.WARNING)  # penman logs every graph at INFO
    out = Path(cfg.out_dir)
    data = instantiate(cfg.data)
    root = data_path(cfg.paths.data_dir)
    split = {
        "train": load_split(root, "train", data.limit_train),
        "dev": load_split(root, "dev", data.limit_dev),
        "test": load_split(root, "test", data.limit_test),
    }
    items = {k: [(e.sentence, e.graph) for e in v] for k, v in split.items()}
    silver = read_silver(data.silver) if data.silver else None
    evals_of = {role: _stage_eval(cfg, role) for role in ROLE_OF.values()}  # before training
    earlier = json.loads((out / SCORES).read_text()) if (out / SCORES).is_file() else {}
    result: dict[str, Any] = {"split": {k: len(v) for k, v in split.items()},
                              "measured": measured_on(),
                              "directions": dict(earlier.get("directions", {}))}  # fmt: skip
    encoder = None
    parse_minutes = None  # the run's own silver parse (data.silver_sentences)
    for direction in cfg.directions:
        role = ROLE_OF[direction]
        sub = _direction_config(cfg, direction)
        form = sub.model.get("graph_form", "serialized")
        has_silver = silver is not None or data.own_silver
        with_silver = has_silver and direction in data.silver_directions
        if with_silver and silver is None:
            t0 = time.perf_counter()
            silver = own_silver(cfg, data, root, out, evals_of["parser"])
            parse_minutes = round((time.perf_counter() - t0) / 60, 2)
        train_items = items["train"] + (silver.items if with_silver else [])
        t0 = time.perf_counter()
        trained = train_seq2seq(
            sub,
            role,
            pairs_for(direction, train_items, data.refocus_copies, int(cfg.seed), form),
            pairs_for(direction, items["dev"], graph_form=form),
            work=out / role,
            name=f"amr-{role}-{cfg.seed}",
        )
        t1 = time.perf_counter()
        evals = evals_of[role]
        module, precision = _decoder(trained["model_dir"], sub, evals)
        batch = int(evals.batch_size)
        if direction == "parse":
            scores = evaluate_parser(module, split["test"], batch, cfg.get("progress", True))
        else:
            if encoder is None:
                from paraamr.metrics.semantic import load_encoder

                encoder = load_encoder(evals.encoder, "cpu")
            scores = evaluate_generator(module, split["test"], encoder, batch,
                                        cfg.get("progress", True),
                                        refocused=bool(evals.get("refocused", True)),
                                        seed=int(cfg.seed))  # fmt: skip
        outputs = scores.pop("outputs")
        with open(out / role / "test_outputs.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(o, ensure_ascii=False) + "\n" for o in outputs)
        result["directions"][direction] = {
            **scores,
            "train": {k: trained[k] for k in ("steps", "best_val_loss", "train_pairs")},
            "train_minutes": round((t1 - t0) / 60, 2),
            "eval_minutes": round((time.perf_counter() - t1) / 60, 2),
            "eval_batch_size": batch,
            "model_dir": trained["model_dir"],
            "signature": str(
                signature(cfg, direction, len(silver.items) if with_silver else 0, precision.label)
            ),
        }
        if with_silver:
            result["directions"][direction]["silver"] = silver.summary()
            if parse_minutes is not None:
                result["directions"][direction]["silver"]["parse_minutes"] = parse_minutes
        write_json_atomic(out / SCORES, result)
    return result
