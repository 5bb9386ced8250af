"""Scores of the AMR models on gold examples.

- parser: corpus **Smatch** precision / recall / F1 (:func:`paraamr.amr.serialize.smatch_score`)
  of the restored graphs against the gold ones, and the share of answers that deserialize (an
  answer that does not is a reject: it matches nothing, its gold triples still count);
- generator: sacrebleu corpus **BLEU** against the gold sentences and the mean MiniLM cosine to
  them (:func:`paraamr.metrics.semantic.cosine_pairs`).

Inputs go in length-sorted batches (:func:`paraamr.lms.answers.answers`), outputs come back in
input order, with a progress bar.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

from paraamr.amr.serialize import deserialize, smatch_score
from paraamr.amrlm.split import AMRExample
from paraamr.lms.answers import answers

__all__ = ["evaluate_parser", "evaluate_generator"]

log = logging.getLogger(__name__)


def evaluate_parser(module: Any, examples: Sequence[AMRExample], batch_size: int = 16,
                    progress: bool = True) -> dict[str, Any]:  # fmt: skip
    """Smatch and the deserialized share of the parser on ``examples``; ``outputs`` holds
    ``{"id", "sentence", "answer", "ok"}`` per example."""
    outs = answers(module, [e.sentence for e in examples], batch_size, progress)
    graphs = [deserialize(a) for a in outs]
    score = smatch_score(graphs, [e.graph for e in examples])
    if score["unreadable"]:
        log.warning("%d of %d answers deserialize but smatch cannot read them: scored as "
                    "matching nothing", score["unreadable"], len(examples))  # fmt: skip
    ok = sum(g is not None for g in graphs)
    return {
        **score,
        "deserialized": ok,
        "deserialized_share": round(ok / len(examples), 4) if examples else 0.0,
        "rejects": len(examples) - ok,
        "outputs": [
            {"id": e.id, "sentence": e.sentence, "answer": a, "ok": g is not None}
            for e, a, g in zip(examples, outs, graphs, strict=True)
        ],  # fmt: skip
    }


def evaluate_generator(module: Any, examples: Sequence[AMRExample], encoder: Any,
                       batch_size: int = 16, progress: bool = True,
                       refocused: bool = True, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """BLEU and mean cosine of the generator's sentences (from the gold graphs' tops) against
    the gold sentences; ``outputs`` holds ``{"id", "sentence", "output"}``.

    With ``refocused``, ``scores["refocused"]`` scores the same against one copy of each graph
    re-focused on another concept (drawn with ``seed``; graphs of one concept have none): the
    inputs the builder gives the generator. ``outputs`` then also hold ``focus`` and
    ``refocused_output``.
    """
    from paraamr.amr.refocus import candidate_foci, linearize, refocus

    prompts = [module.graph_prompt(linearize(e.graph)) for e in examples]
    outs = answers(module, prompts, batch_size, progress)
    refs = [e.sentence for e in examples]
    scores = _sentence_scores(outs, refs, encoder)
    rows = [{"id": e.id, "sentence": e.sentence, "output": o}
            for e, o in zip(examples, outs, strict=True)]  # fmt: skip
    if refocused:
        rng = random.Random(seed)
        picked = []  # (row index, focus, prompt)
        for i, e in enumerate(examples):
            others = [f for f in candidate_foci(e.graph) if f != e.graph.top]
            if others:
                f = rng.choice(others)
                picked.append((i, f, module.graph_prompt(linearize(refocus(e.graph, f)))))
        routs = answers(module, [p for _, _, p in picked], batch_size, progress)
        scores["refocused"] = _sentence_scores(routs, [refs[i] for i, _, _ in picked], encoder)
        for (i, f, _), o in zip(picked, routs, strict=True):
            rows[i].update(focus=f, refocused_output=o)
    return {**scores, "outputs": rows}


def _sentence_scores(outs: list[str], refs: list[str], encoder: Any) -> dict[str, Any]:
    """Corpus BLEU (sacrebleu) and mean cosine of ``outs`` against ``refs``."""
    from paraamr.metrics.pairwise import Bleu
    from paraamr.metrics.semantic import cosine_pairs

    bleu = Bleu("sacrebleu-corpus")
    cos = cosine_pairs(list(zip(outs, refs, strict=True)), encoder) if outs else []
    return {
        "bleu": round(100.0 * bleu.corpus_score(outs, refs).value, 2) if outs else 0.0,
        "bleu_signature": bleu.sacrebleu_signature(),
        "cosine": round(float(sum(cos) / len(cos)), 4) if len(cos) else 0.0,
        "pairs": len(outs),
    }
