"""Table 6 of the ParaAMR paper: SCPN trained on each paraphrase corpus, BLEU on human paraphrases.

One job = one (corpus, input format, seed): train (:func:`paraamr.scpn.train.train`), evaluate the
best model on every test set (:func:`paraamr.scpn.evaluate.evaluate_model`), write
``<out_dir>/results.json`` (:class:`paraamr.results.JobResult`). ``train_corpus=none`` is the
copy-the-source baseline (no training); ``model.input_format=noparse`` the same model trained
without the parse input. W&B: group ``table6``, a ``wandb.Table`` of sample outputs per test set.
:mod:`paraamr.tables.table6` gathers a sweep's records into the table.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from paraamr.errors import ConfigError
from paraamr.scpn.decoding import Decoding

__all__ = ["run_job", "METRICS", "signature", "recipe_signature"]

log = logging.getLogger(__name__)

METRICS = (
    "bleu",
    "ted3",
    "tedf",
    "template_match",
    "similarity",
    "one_minus_bleu_src",
    "control_gain",
)


def signature(
    cfg: DictConfig,
    model: str,
    fmt: str,
    parser: str,
    steps: int | None,
    test_sets: Iterable[str] | None = None,
) -> str:
    """How the row was made: model, format, parser, corpus, budget, test sets (default
    ``cfg.eval.test_sets``), versions; ``control:`` when the parse-control run was made."""
    from paraamr.metrics.pairwise import Bleu, TreeEdit, similarity_field
    from paraamr.metrics.semantic import similarity_label
    from paraamr.signature import Signature, package_versions, versions_field

    v = package_versions()
    ev, d = cfg.eval, cfg.data
    pairs = f"max{d.get('max_paraphrases')},identity:{'yes' if d.get('identity') else 'no'}"
    pairs += f",ppl:<={d.get('max_perplexity')},dev:last{d.get('dev_sources')}"
    if d.get("limit_sources"):
        pairs += f",first{d.limit_sources}"  # per corpus when data.path lists several
    tests = list(test_sets) if test_sets is not None else list(ev.test_sets)
    fmt_key, _, fmt_value = fmt.partition(":")
    test = f"{','.join(tests)}:first{ev.limit}" if ev.limit else ",".join(tests)
    fields: list[tuple[str, object]] = [
        ("paraamr", v["paraamr"]),
        ("scpn", f"model:{model}"),
        (fmt_key, fmt_value),
        ("parser", parser),
        ("train", cfg.corpus),
        *([("pairs", pairs)] if cfg.corpus != "none" else []),
        ("seed", cfg.seed),
        ("steps", steps),
        ("beams", cfg.model.num_beams),
        ("test", test),
        ("bleu", Bleu("sacrebleu-corpus").signature()),
        ("sim", similarity_field(similarity_label(cfg.similarity))),
        ("ted", f"{TreeEdit().signature()},target=reference-parse"),
        ("versions", versions_field(("torch", "transformers", "sacrebleu", "spacy"))),
    ]  # fmt: skip
    if ev.get("control"):
        fields.insert(-1, ("control", "swapped-target-parse(i+n//2)"))
    return Signature.build(*fields)


def recipe_signature(module: Any) -> str:
    """The format signature plus what the model writes and how it was trained:
    ``out:tree,depth:4,train-depths:3/4,freeze:20`` (template infilling) or ``out:plain``."""
    hp = module.hparams
    parts = [module.fmt.signature(), f"out:{module.output_format}"]
    if module.output_format == "tree":
        depths = hp.get("train_template_depths") or [hp.get("template_depth")]
        parts += [f"depth:{hp.get('template_depth')}",
                  "train-depths:" + "/".join(str(d) for d in depths)]  # fmt: skip
    parts.append(f"freeze:{hp.get('freeze_layers') or 0}")
    parts += Decoding.of(module).signature_parts()
    return ",".join(parts)


def decoding_overrides(model_cfg: Any) -> dict[str, Any]:
    """The decoding settings a trained model is evaluated with, taken from the job's config
    (so one model can be scored with other settings): ``no_repeat_words``, ``word_cap`` and
    ``force_template`` always (``None`` / false: off), ``template_depth`` where the config sets
    one (a tree model cuts full target parses to it; unset: the depth it was trained with).

    >>> decoding_overrides({"no_repeat_words": 4, "template_depth": 3, "lr": 1e-4})
    {'no_repeat_words': 4, 'word_cap': None, 'force_template': False, 'template_depth': 3}
    >>> decoding_overrides({"template_depth": None, "word_cap": [1.5, 3], "force_template": True})
    {'no_repeat_words': None, 'word_cap': [1.5, 3], 'force_template': True}
    """
    out: dict[str, Any] = Decoding.of(model_cfg).fields()
    if model_cfg.get("template_depth") is not None:
        out["template_depth"] = int(model_cfg["template_depth"])
    return out


def _trained(out: Path) -> dict[str, Any]:
    """``eval_only``: the training result already in ``out`` (its ``train_result.json``)."""
    path = out / "train_result.json"
    if not path.exists():
        raise ConfigError(f"eval_only=true: {path} not found (train this job first)")
    return json.loads(path.read_text(encoding="utf-8"))


def run_job(cfg: DictConfig) -> dict[str, Any]:
    """Train (unless ``corpus == none``, or ``eval_only``: the model ``out_dir`` already holds)
    and evaluate; returns and writes ``results.json`` (the job record,
    :class:`paraamr.results.JobResult`; ``eval_only`` replaces the test sets it evaluates and
    keeps the others)."""
    from hydra.utils import instantiate

    from paraamr.results import RESULT_FILE, JobResult, Stopwatch
    from paraamr.scpn.evaluate import STAND_IN_NOTE, copy_source, evaluate_model, load_test_set
    from paraamr.tracking import log_table, wandb_run

    clock = Stopwatch()
    out = Path(cfg.out_dir)
    parser = instantiate(cfg.parser)
    encoder = instantiate(cfg.similarity)
    copy = cfg.corpus == "none"
    train_result: dict[str, Any] = {}
    if copy:
        gen, module, needs = copy_source, None, False
        model_name, fmt = "copy-source", "fmt:none"
    else:
        from paraamr.scpn.evaluate import model_generator
        from paraamr.scpn.module import SCPNModule
        from paraamr.scpn.train import train

        train_result = _trained(out) if cfg.get("eval_only") else train(cfg)
        if not train_result["best_model"]:
            return train_result
        module = SCPNModule.load(train_result["best_model"], **decoding_overrides(cfg.model))
        gen = model_generator(module, cfg.eval.batch_size, cfg.model.num_beams)
        needs = module.fmt.needs_source_parse
        model_name, fmt = str(cfg.model.model_name_or_path), recipe_signature(module)
    sig = signature(cfg, model_name, fmt, parser.signature(), train_result.get("steps"))
    tests: dict[str, Any] = {}
    for name in cfg.eval.test_sets:
        pairs = load_test_set(name, cfg.paths.data_dir, cfg.eval.limit)
        tests[name] = evaluate_model(gen, pairs, out / "eval" / name, parser=parser,
                                     encoder=encoder, needs_source_parse=needs, signature=sig,
                                     samples=cfg.eval.samples,
                                     control=bool(cfg.eval.get("control", False)))  # fmt: skip
        if module is not None and module.output_format == "tree":
            tests[name]["answers"] = dict(module.answer_counts)  # given + swapped parses
            module.answer_counts.clear()
        if module is not None and module.no_repeat_words:
            tests[name]["repeat_bans"] = module.repeat_bans  # row-steps blocked, both runs
            module.repeat_bans = 0
        if module is not None and module.word_cap:
            tests[name]["word_cap_hits"] = module.word_cap_hits  # answers cut, both runs
            module.word_cap_hits = 0
        log.info("%s %s: BLEU %.2f", cfg.corpus, name, tests[name]["bleu"])
    scores = {k: {m: v for m, v in t.items() if m != "samples"} for k, t in tests.items()}
    if cfg.get("eval_only") and (out / RESULT_FILE).exists():  # keep the sets not re-evaluated
        earlier = json.loads((out / RESULT_FILE).read_text(encoding="utf-8"))
        scores = {**earlier["tests"], **scores}
        sig = signature(cfg, model_name, fmt, parser.signature(), train_result.get("steps"),
                        scores)  # fmt: skip
    # a tree model scored at another template depth than it was saved with gets its own row
    tree_depth = None
    if module is not None and module.output_format == "tree":
        depth = module.hparams.get("template_depth")
        if depth != module.read_sidecar(train_result["best_model"]).get("template_depth"):
            tree_depth = depth
    decoding = Decoding.of(module if module is not None else {}).fields()
    fields = {
        "corpus": "copy source" if copy else str(cfg.corpus),
        "input_format": "none" if copy else str(cfg.model.input_format),
        "no_repeat_words": decoding["no_repeat_words"],
        "template_depth": tree_depth,
        "word_cap": decoding["word_cap"],
        "force_template": decoding["force_template"],
        "note": STAND_IN_NOTE,
        "train": {k: v for k, v in train_result.items() if k != "pair_stats"},
        "pair_stats": train_result.get("pair_stats", {}),
        "tests": scores,
    }
    files = {"model": train_result["best_model"]} if not copy else {}
    record = JobResult("scpn", int(cfg.seed), str(sig), fields, files, clock.seconds())
    record.write(out)
    result = record.to_dict()
    wb = cfg.logger.wandb
    with wandb_run(project=wb.project, group="table6", name=f"{result['corpus']}-"
                   f"{result['input_format']}-{cfg.seed}-eval", config=OmegaConf.to_container(
                       cfg, resolve=True), directory=str(out), mode=wb.mode,
                   enabled=wb.enabled) as run:  # fmt: skip
        for name, t in tests.items():
            cols = ["source", "target_parse", "output", "reference", "ted3"]
            log_table(run, f"samples/{name}", cols, [[s[c] for c in cols] for s in t["samples"]])
            if run is not None:
                run.log({f"{name}/{m}": t[m] for m in METRICS if m in t})
    return result
