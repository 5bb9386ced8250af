"""Every automatic measure of the project, computed for each judged (source, paraphrase) pair.

================  ======================================================  =================
measure           how                                                     closer in meaning
================  ======================================================  =================
similarity        cosine of sentence embeddings (any encoder)             higher
bleu              sentence BLEU of the paraphrase vs its source (Table 2)  higher
bleu_sacrebleu    sacrebleu's smoothed sentence BLEU vs the source        higher
iou               token-set intersection over union with the source       higher
ted3              tree edit distance to the source, depth 3               lower
tedf              tree edit distance to the source, full trees            lower
perplexity        causal-LM perplexity of the paraphrase                  (fluency)
nll               the judgement file's own NLL column (ParaBank's NMT)    lower
================  ======================================================  =================

A pair whose sentences the parser cannot parse gets ``nan`` for the parse-based measures (counted
in ``failures``); ``nan`` values are left out of every correlation.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paraamr.errors import ParserError
from paraamr.metrics.pairwise import (
    Bleu,
    Sentence,
    Similarity,
    TokenIoU,
    TreeEdit,
    similarity_field,
)
from paraamr.parsers.base import parse_unique
from paraamr.signature import Signature, package_versions, versions_field
from paraamr.validity.judgements import Item

__all__ = ["MEASURES", "DIRECTION", "Measures", "compute_measures", "measure_signatures"]

log = logging.getLogger(__name__)

MEASURES = ("similarity", "bleu", "bleu_sacrebleu", "iou", "ted3", "tedf", "perplexity", "nll")
#: +1: larger means closer in meaning (or more fluent); -1: larger means further / less fluent
DIRECTION = {
    "similarity": 1,
    "bleu": 1,
    "bleu_sacrebleu": 1,
    "iou": 1,
    "ted3": -1,
    "tedf": -1,
    "perplexity": -1,
    "nll": -1,
}


@dataclass
class Measures:
    """Measure values aligned with ``items`` (``nan`` where not computed), their signatures,
    the perplexity of each source and the time each step took."""

    values: dict[str, np.ndarray]
    signatures: dict[str, str]
    source_perplexity: dict[str, float] = field(default_factory=dict)
    failures: Counter = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)


def measure_signatures(
    *,
    data: str,
    similarity: str,
    parser_sig: str,
    ted_variant: str = "paraamr",
    ted_kernel: str = "edist",
    ted3_depth: int = 3,
    lowercase: bool = False,
    lm_sig: str | None = None,
) -> dict[str, str]:
    """One signature per measure, its field from the metric object that computes it
    (:mod:`paraamr.metrics.pairwise`, the objects of Table 2).

    >>> s = measure_signatures(data="d", similarity="minilm", parser_sig="p", lm_sig="ppl(x)")
    >>> list(s["similarity"].fields)
    ['paraamr', 'data', 'agg', 'sim', 'versions']
    >>> s["similarity"].fields["agg"]
    'per-pair,human=mean-of-judges,copies-excluded,boot=sources'
    >>> s["ted3"].fields["ted"]
    'paraamr-v2,d3:3,unit-cost,words:no,pos:yes,kernel:edist'
    """
    v = package_versions()
    versions = versions_field()
    head = [
        ("paraamr", v["paraamr"]),
        ("data", data),
        ("agg", "per-pair,human=mean-of-judges,copies-excluded,boot=sources"),
    ]
    tail = [("parser", parser_sig), ("versions", versions)]
    bare = [("versions", versions)]
    lm = ("lm", lm_sig) if lm_sig else ("ppl", "none")
    ted3 = TreeEdit(ted_variant, ted3_depth, ted_kernel)
    tedf = TreeEdit(ted_variant, None, ted_kernel)
    sacre = Bleu("sacrebleu-sentence", lowercase).signature()
    sig = Signature.build
    return {
        "similarity": sig(*head, ("sim", similarity_field(similarity)), *bare),
        "bleu": sig(*head, ("bleu", Bleu("nltk-sentence", lowercase).signature()), *tail),
        "bleu_sacrebleu": sig(*head, ("bleu", sacre), *bare),
        "iou": sig(*head, ("iou", TokenIoU(lowercase).signature()), *tail),
        "ted3": sig(*head, ("ted", ted3.signature()), *tail),
        "tedf": sig(*head, ("ted", tedf.signature()), *tail),
        "perplexity": sig(*head, lm, *bare),
        "nll": sig(*head, ("nll", "file-column(generator NLL, mean over sys_id groups)")),
        "_versions": ",".join(f"{k}-{x}" for k, x in v.items()),
    }


def compute_measures(
    items: Sequence[Item],
    *,
    encoder,
    parser,
    scorer=None,
    similarity_name: str,
    data: str,
    ted_variant: str = "paraamr",
    ted_kernel: str = "edist",
    ted3_depth: int = 3,
    lowercase: bool = False,
    similarity_batch_size: int = 128,
    parse_batch_size: int = 256,
    lm_batch_size: int = 16,
) -> Measures:
    """Compute :data:`MEASURES` for ``items``.

    Args:
        items: the judged pairs (copies included or not: the caller decides).
        encoder: anything with sentence-transformers' ``encode``.
        parser: a :class:`~paraamr.parsers.base.ParserBackend`.
        scorer: anything with ``perplexities(sentences, batch_size)`` and ``signature()``;
            ``None`` leaves perplexity out (``nan``).
        similarity_name: the encoder's name for the signature.
        data: the data part of the signatures.
    """
    n = len(items)
    vals = {m: np.full(n, np.nan) for m in MEASURES}
    fails: Counter = Counter()
    secs: dict[str, float] = {}
    pairs = [(it.source, it.paraphrase) for it in items]

    bleu, sacre = Bleu("nltk-sentence", lowercase), Bleu("sacrebleu-sentence", lowercase)
    iou, ted = TokenIoU(lowercase), TreeEdit(ted_variant, ted3_depth, ted_kernel)
    t = time.perf_counter()
    similarity = Similarity(encoder, similarity_name, similarity_batch_size)
    vals["similarity"][:] = similarity.cosines(pairs)
    secs["similarity"] = time.perf_counter() - t

    t = time.perf_counter()
    parsed = parse_unique([s for p in pairs for s in p], parser, parse_batch_size)
    secs["parse"] = time.perf_counter() - t
    t = time.perf_counter()
    tree_pairs, tree_idx = [], []
    for k, (src, para) in enumerate(pairs):
        a, b = parsed[src], parsed[para]
        if isinstance(a, ParserError) or isinstance(b, ParserError):
            fails[f"not parsed: {a if isinstance(a, ParserError) else b}"] += 1
            vals["bleu_sacrebleu"][k] = sacre.sentence_score(para, src)
            continue
        hyp, ref = Sentence.of(para, b), Sentence.of(src, a)
        vals["bleu"][k] = bleu.sentence_score(hyp, ref)
        vals["bleu_sacrebleu"][k] = sacre.sentence_score(hyp, ref)
        vals["iou"][k] = iou.sentence_score(hyp, ref)
        tree_pairs.append((ref, hyp))
        tree_idx.append(k)
    for k, r in zip(tree_idx, ted.cut_and_full(tree_pairs), strict=True):
        if isinstance(r, str):
            fails[f"tree not readable: {r}"] += 1
            continue
        vals["ted3"][k], vals["tedf"][k] = r
    secs["lexical+ted"] = time.perf_counter() - t

    source_ppl: dict[str, float] = {}
    if scorer is not None:
        t = time.perf_counter()
        sents = list(dict.fromkeys([p for _, p in pairs] + [s for s, _ in pairs]))
        ppl = dict(zip(sents, scorer.perplexities(sents, lm_batch_size), strict=True))
        vals["perplexity"][:] = [ppl[p] for _, p in pairs]
        source_ppl = {s: ppl[s] for s, _ in pairs}
        fails["perplexity not finite"] += int(np.sum(~np.isfinite(vals["perplexity"])))
        secs["perplexity"] = time.perf_counter() - t
    vals["nll"][:] = [math.nan if it.nll is None else it.nll for it in items]

    sigs = measure_signatures(
        data=data,
        similarity=similarity_name,
        parser_sig=parser.signature(),
        ted_variant=ted_variant,
        ted_kernel=ted_kernel,
        ted3_depth=ted3_depth,
        lowercase=lowercase,
        lm_sig=scorer.signature() if scorer is not None else None,
    )
    return Measures(vals, sigs, source_ppl, +fails, secs)
