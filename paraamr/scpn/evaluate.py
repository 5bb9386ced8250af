"""Table 6 evaluation: a trained paraphraser (or a baseline) on human paraphrase test sets.

Test sets (:data:`TEST_SETS`, read from the data directory) are our stand-ins for the test
examples the paper took from SynPG, which are not available:

- ``quora``: QQP-Pos test (``paraphrase/qqppos-paranmt-small/quora/test_{src,trg}.txt``);
- ``mrpc``: the positive pairs of the MSRP test split (``paraphrase/msrp/msr-para-test.tsv``);
- ``pan``: the positive pairs of the PAN test split (``paraphrase/pan/pan-test_s{1,2}.txt`` +
  ``pan-test.labels``).

The target parse is the reference paraphrase's parse (the usual protocol). Per test set:

- ``bleu``: sacrebleu corpus BLEU of the outputs against the references (signature kept);
- ``ted3`` / ``tedf``: mean TED (project variant ``paraamr``) between each output's parse and
  the target parse, pruned to depth 3 / full;
- ``template_match``: share of outputs whose top two levels below ROOT (the tree pruned to
  depth 3) equal the target parse's;
- ``similarity``: mean cosine (sentence encoder) between output and source;
- ``one_minus_bleu_src``: 100 - corpus BLEU of the outputs against the sources (diversity).

Files under ``out_dir/<test set>/``: ``source.txt``, ``reference.txt``, ``target_parse.txt``
(word-free), ``predictions.txt`` (one output per line, aligned), ``metrics.json`` — anyone can
recompute BLEU with ``sacrebleu reference.txt < predictions.txt``.

**Parse control** (``control=True``): does the output follow the parse it is *given*? Each
source is generated a second time with another pair's target parse (pair ``i`` gets the parse
of pair ``(i + n // 2) mod n``: :func:`swapped_order`), and the TED-3 of that output is taken to
the parse it was given and to its own reference parse: ``control_ted3_given`` /
``control_ted3_own`` and ``control_gain`` = own − given. A model that ignores its parse input
writes the same output both times, closer to its own reference's parse (the reference
paraphrases the source): gain below zero, as for copying the source; a model that follows the
parse moves towards the given one: a higher gain. Unlike comparing with a separately trained
no-parse model, this holds the model fixed and changes only the parse. Files:
``target_parse_swapped.txt``, ``predictions_swapped.txt``.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from paraamr.errors import ParaAMRError
from paraamr.utils import map_length_batches, write_json_atomic

__all__ = [
    "TEST_SETS",
    "STAND_IN_NOTE",
    "load_test_set",
    "evaluate_outputs",
    "evaluate_model",
    "copy_source",
    "model_generator",
    "swapped_order",
    "control_scores",
]

log = logging.getLogger(__name__)

TEST_SETS = ("quora", "mrpc", "pan")
STAND_IN_NOTE = (
    "test sets are stand-ins for the paper's SynPG test examples (not available): Quora = "
    "QQP-Pos test, MRPC = MSRP test positives, PAN = PAN test positives"
)


#: test set -> (path under the data folder's paraphrase/, corpus format)
TEST_FILES = {
    "quora": ("qqppos-paranmt-small/quora/test_src.txt", "src-trg"),
    "mrpc": ("msrp/msr-para-test.tsv", "msrp"),
    "pan": ("pan", "pan-test"),
}


def load_test_set(name: str, data_dir: str | os.PathLike | None = None, limit: int | None = None):
    """``[(source, reference), ...]`` of a test set (the first ``limit``).

    Raises:
        DataNotFoundError: the files are missing (the message names them).
        ParaAMRError: an unknown name, or misaligned files (named with the line).
    """
    from paraamr.corpus.errors import SkipLog
    from paraamr.corpus.readers import read_corpus
    from paraamr.datadir import data_path

    if name not in TEST_FILES:
        raise ParaAMRError(f"unknown test set {name!r}; choose from {TEST_SETS}")
    rel, fmt = TEST_FILES[name]
    records = read_corpus(data_path(data_dir, "paraphrase", rel), fmt, SkipLog("raise"))
    pairs = [(r.text, p.text) for r in records for p in r.paraphrases]
    return pairs[:limit] if limit is not None else pairs


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    path.write_text("".join(" ".join(x.split()) + "\n" for x in lines), encoding="utf-8")


def evaluate_outputs(
    sources: Sequence[str],
    references: Sequence[str],
    outputs: Sequence[str],
    *,
    parser: Any,
    encoder: Any,
    ref_parses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The metrics of the module docstring for aligned lists (outputs may be empty strings),
    scored with the metric objects of :mod:`paraamr.metrics.pairwise`."""
    import numpy as np

    from paraamr.metrics.pairwise import Bleu, Similarity, TreeEdit
    from paraamr.parsers.base import parse_unique
    from paraamr.scpn.formats import linearize

    bleu = Bleu("sacrebleu-corpus")
    score = bleu.corpus_score(list(outputs), list(references)).value or 0.0
    src_score = bleu.corpus_score(list(outputs), list(sources)).value or 0.0
    parsed = parse_unique([o for o in outputs if o.strip()], parser)
    ref_parses = ref_parses or parse_unique(references, parser)
    counts: Counter = Counter()
    ted_pairs, match = [], []
    for o, r in zip(outputs, references, strict=True):
        po, pr = parsed.get(o), ref_parses.get(r)
        if po is None or isinstance(po, Exception) or pr is None or isinstance(pr, Exception):
            counts["unparsed_output_or_reference"] += 1
            continue
        ted_pairs.append((po.tree, pr.tree))
        match.append(linearize(po.tree, 3) == linearize(pr.tree, 3))
    teds = [t for t in TreeEdit().cut_and_full(ted_pairs) if not isinstance(t, str)]
    sims = Similarity(encoder, "").cosines(list(zip(sources, outputs, strict=True)))
    return {
        "n": len(outputs),
        "bleu": round(100.0 * score, 4),
        "bleu_signature": bleu.sacrebleu_signature(),
        "ted3": float(np.mean([t[0] for t in teds])) if teds else float("nan"),
        "tedf": float(np.mean([t[1] for t in teds])) if teds else float("nan"),
        "template_match": float(np.mean(match)) if match else float("nan"),
        "similarity": float(np.mean(sims)) if len(sims) else float("nan"),
        "one_minus_bleu_src": round(100.0 - 100.0 * src_score, 4) + 0.0,  # no -0.0
        "empty_outputs": sum(1 for o in outputs if not o.strip()),
        **counts,
    }


def swapped_order(n: int) -> list[int]:
    """Whose target parse each pair gets in the control run: ``(i + n // 2) % n`` (no pair
    keeps its own when ``n > 1``; deterministic, so runs compare).

    >>> swapped_order(5), swapped_order(1)
    ([2, 3, 4, 0, 1], [0])
    """
    return [(i + n // 2) % n for i in range(n)]


def control_scores(
    outputs: Sequence[str], given: Sequence[Any], own: Sequence[Any], *, parser: Any
) -> dict[str, Any]:
    """TED-3 of each control output to the parse it was given and to its own reference parse
    (trees), means over the outputs that parse, and ``control_gain`` = own − given."""
    import numpy as np

    from paraamr.metrics.pairwise import TreeEdit
    from paraamr.parsers.base import parse_unique

    parsed = parse_unique([o for o in outputs if o.strip()], parser)
    pairs_given, pairs_own = [], []
    for o, g, w in zip(outputs, given, own, strict=True):
        po = parsed.get(o)
        if po is None or isinstance(po, Exception):
            continue
        pairs_given.append((po.tree, g))
        pairs_own.append((po.tree, w))
    if not pairs_given:
        return {"control_n": 0}
    ted = TreeEdit()
    t_given = ted.pair_scores(pairs_given)
    t_own = ted.pair_scores(pairs_own)
    return {
        "control_n": len(t_given),
        "control_ted3_given": float(np.mean(t_given)),
        "control_ted3_own": float(np.mean(t_own)),
        "control_gain": float(np.mean(t_own) - np.mean(t_given)),
    }


def copy_source(
    sources: Sequence[str], target_parses: Sequence[str], source_parses: Sequence[str | None]
) -> list[str]:
    """The copy baseline: the output is the source."""
    return list(sources)


def evaluate_model(
    generate: Callable[[Sequence[str], Sequence[str], Sequence[str | None]], list[str]],
    pairs: Sequence[tuple[str, str]],
    out_dir: str | os.PathLike,
    *,
    parser: Any,
    encoder: Any,
    needs_source_parse: bool = False,
    signature: str = "",
    samples: int = 20,
    control: bool = False,
) -> dict[str, Any]:
    """Parse the references (target parses), generate, score, write the aligned files.

    Args:
        generate: ``(sources, word-free target parses, word-free source parses or None) ->
            outputs`` (e.g. :func:`model_generator`, or :func:`copy_source`-like).
        pairs: ``(source, reference)`` of one test set.
        out_dir: the test set's folder.
        needs_source_parse: parse the sources too (AESOP-style inputs).
        signature: written into ``metrics.json``.
        samples: rows kept for the W&B table (``metrics.json`` ``samples``).
        control: also generate with swapped target parses and score parse control (module
            docstring).

    Pairs whose reference (or needed source) cannot be parsed are dropped and counted
    (``dropped_unparsed``); the files hold the pairs that were scored.
    """
    from paraamr.metrics.pairwise import TreeEdit
    from paraamr.parsers.base import parse_unique
    from paraamr.scpn.formats import linearize

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    refs = parse_unique([r for _, r in pairs], parser)
    srcs = parse_unique([s for s, _ in pairs], parser) if needs_source_parse else {}
    kept = [
        (s, r)
        for s, r in pairs
        if not isinstance(refs[r], Exception)
        and not (needs_source_parse and isinstance(srcs[s], Exception))
    ]
    dropped = len(pairs) - len(kept)
    if not kept:
        raise ParaAMRError(f"{out}: no test pair could be parsed")
    sources, references = [s for s, _ in kept], [r for _, r in kept]
    tparses = [linearize(refs[r].tree) for r in references]
    sparses = [linearize(srcs[s].tree) if needs_source_parse else None for s in sources]
    outputs = [" ".join(o.split()) for o in generate(sources, tparses, sparses)]
    if len(outputs) != len(sources):
        raise ParaAMRError(f"generator returned {len(outputs)} outputs for {len(sources)} inputs")
    metrics = evaluate_outputs(sources, references, outputs, parser=parser, encoder=encoder,
                               ref_parses=refs)  # fmt: skip
    metrics["dropped_unparsed"] = dropped
    metrics["signature"] = signature
    metrics["note"] = STAND_IN_NOTE
    _write_lines(out / "source.txt", sources)
    _write_lines(out / "reference.txt", references)
    _write_lines(out / "target_parse.txt", tparses)
    _write_lines(out / "predictions.txt", outputs)
    if control:
        order = swapped_order(len(sources))
        swapped = [tparses[j] for j in order]
        outs = [" ".join(o.split()) for o in generate(sources, swapped, sparses)]
        given = [refs[references[j]].tree for j in order]
        own = [refs[r].tree for r in references]
        metrics.update(control_scores(outs, given, own, parser=parser))
        _write_lines(out / "target_parse_swapped.txt", swapped)
        _write_lines(out / "predictions_swapped.txt", outs)
    parsed = parse_unique(outputs[:samples], parser)
    rows = []
    for s, tp, o, r in list(zip(sources, tparses, outputs, references, strict=True))[:samples]:
        po = parsed.get(o)
        ted = None  # an output the parser failed on, or a tree that does not read
        if po is not None and not isinstance(po, Exception):
            (both,) = TreeEdit().cut_and_full([(po.tree, refs[r].tree)])
            ted = None if isinstance(both, str) else both[0]
        rows.append({"source": s, "target_parse": tp, "output": o, "reference": r, "ted3": ted})
    metrics["samples"] = rows
    write_json_atomic(out / "metrics.json", metrics, sort_keys=False)
    return metrics


def model_generator(
    module: Any, batch_size: int = 16, num_beams: int | None = None, progress: bool = True
) -> Callable:
    """A ``generate`` for :func:`evaluate_model` from a trained module (length-sorted batches);
    ``progress``: a tqdm bar over the sentences of each call (total, rate and ETA; a test set's
    generation takes minutes on a CPU)."""
    from tqdm.auto import tqdm

    def generate(sources, tparses, sparses):
        segs = [module.fmt.segments(s, sp, tp) for s, tp, sp in zip(sources, tparses, sparses,
                                                                   strict=True)]  # fmt: skip
        lengths = [len(module.encoder.input_ids(x)) for x in segs]
        with tqdm(total=len(segs), desc="generate", unit="sent", disable=not progress) as bar:

            def run(batch):
                out = module.generate_texts(batch, num_beams)
                bar.update(len(batch))
                return out

            return map_length_batches(segs, run, batch_size, lengths=lengths)

    return generate
