"""Constrained decoding on and off, side by side, for one trained decoder-only TOP model
(a ``make top-weather25`` run's ``multitask/model``, or any ``TopModule.save`` dir):

- parser: exact match, valid trees and trees that keep the utterance's words on the test trees;
- generator: valid samples and samples whose template is the requested one, one top-p sample
  per training template (the same seeds both ways).

    python benchmarks/top_constraints.py \\
        --model results/top/runs/topv2-weather-25spis/full/seed0/full/multitask/model \\
        --train topv2/low_resource_splits/weather_train_25spis.tsv \\
        --test topv2/weather_test.tsv --limit-test 200 --out results/bench/top_constraints.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from paraamr.datadir import resolve_data_dir


def _path(p: str) -> Path:
    q = Path(p)
    return q if q.exists() else resolve_data_dir(None) / p


def main(argv: list[str] | None = None) -> dict:
    from paraamr.top.encoding import DecodeError, LabelVocab, decode
    from paraamr.top.module import TopModule
    from paraamr.top.pairs import sampling_plan
    from paraamr.top.readers import read_trees
    from paraamr.top.templates import template_string
    from paraamr.top.trees import same_tree, utterance
    from paraamr.utils import map_length_batches

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", required=True, help="training trees (the generator's templates)")
    ap.add_argument("--test", required=True)
    ap.add_argument("--limit-test", type=int, default=200, help="a seeded subset (0: all)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", default="results/bench/top_constraints.json")
    a = ap.parse_args(argv)

    module = TopModule.from_saved(a.model)
    vocab = LabelVocab.from_labels(module.settings["labels"])
    train = list(read_trees(_path(a.train)))
    test = list(read_trees(_path(a.test)))
    if a.limit_test and a.limit_test < len(test):  # the same subset as data.limit_test
        rng = random.Random(0)
        test = [test[i] for i in sorted(rng.sample(range(len(test)), a.limit_test))]
    plan = sampling_plan(train, 1, seed=0)
    utts = [utterance(t) for t in test]

    def tree(text: str):
        try:
            return decode(text, vocab)
        except DecodeError:
            return None

    result: dict = {"model": a.model, "test": len(test), "templates": len(plan)}
    for constrained in (False, True):
        module.settings["constrained"] = constrained
        t0 = time.perf_counter()
        outs = map_length_batches(utts, module.generate, a.batch_size)
        parse_s = time.perf_counter() - t0
        trees = [tree(o) for o in outs]
        t0 = time.perf_counter()
        samples = module.generate([r.source for r in plan], do_sample=True, top_p=0.9, seed=0)
        gen_s = time.perf_counter() - t0
        gtrees = [tree(o) for o in samples]
        result["constrained" if constrained else "free"] = {
            "parser": {
                "exact_match": 100
                * sum(same_tree(p, g) for p, g in zip(trees, test, strict=True) if p is not None)
                / len(test),  # fmt: skip
                "valid": sum(p is not None for p in trees),
                "keeps_words": sum(
                    p is not None and utterance(p) == u for p, u in zip(trees, utts, strict=True)
                ),  # fmt: skip
                "seconds": round(parse_s, 1),
            },
            "generator": {
                "samples": len(plan),
                "valid": sum(t is not None for t in gtrees),
                "template_matching": sum(
                    t is not None and template_string(t) == r.template
                    for t, r in zip(gtrees, plan, strict=True)
                ),  # fmt: skip
                "seconds": round(gen_s, 1),
            },
        }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
