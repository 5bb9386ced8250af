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
from paraamr.metrics.lexical import bleu_nltk, bleu_sacrebleu_sentence, token_iou
from paraamr.metrics.semantic import cosine_pairs
from paraamr.metrics.signature import metric_signature
from paraamr.metrics.ted import ted_batch
from paraamr.parsers.base import parse_unique
from paraamr.signature import Signature, package_versions
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
    """One signature per measure, built from the project's Table 2 signature parts.

    >>> s = measure_signatures(data="d", similarity="minilm", parser_sig="p", lm_sig="ppl(x)")
    >>> s["similarity"].split("|")[:3]
    ['paraamr:0.1.0', 'data:d', 'agg:per-pair,human=mean-of-judges,copies-excluded,boot=sources']
    >>> s["ted3"].split("|")[3]
    'ted:paraamr-v2,d3:3,unit-cost,words:no,pos:yes,kernel:edist'
    """
    common = dict(
        similarity=similarity,
        parser_sig=parser_sig,
        ted_variant=ted_variant,
        ted_kernel=ted_kernel,
        ted3_depth=ted3_depth,
        data=data,
        lowercase=lowercase,
    )
    part = metric_signature(bleu="nltk-sentence", **common).fields
    sacre = metric_signature(bleu="sacrebleu-sentence", **common).fields["bleu"]
    v = package_versions()
    head = [
        ("paraamr", part["paraamr"]),
        ("data", part["data"]),
        ("agg", "per-pair,human=mean-of-judges,copies-excluded,boot=sources"),
    ]
    tail = [("parser", part["parser"]), ("versions", part["versions"])]
    bare = [("versions", part["versions"])]
    lm = ("lm", lm_sig) if lm_sig else ("ppl", "none")
    sig = Signature.build
    return {
        "similarity": sig(*head, ("sim", part["sim"]), *bare),
        "bleu": sig(*head, ("bleu", part["bleu"]), *tail),
        "bleu_sacrebleu": sig(*head, ("bleu", sacre), *bare),
        "iou": sig(*head, ("iou", part["iou"]), *tail),
        "ted3": sig(*head, ("ted", part["ted"]), *tail),
        "tedf": sig(*head, ("ted", part["ted"].replace(f"d3:{ted3_depth}", "full")), *tail),
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

    t = time.perf_counter()
    vals["similarity"][:] = cosine_pairs(pairs, encoder, similarity_batch_size)
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
            vals["bleu_sacrebleu"][k] = bleu_sacrebleu_sentence(para, src)
            continue
        ta, tb = list(a.tokens), list(b.tokens)
        if lowercase:
            ta, tb = [x.lower() for x in ta], [x.lower() for x in tb]
        vals["bleu"][k] = bleu_nltk(tb, ta)
        vals["bleu_sacrebleu"][k] = bleu_sacrebleu_sentence(para, src)
        vals["iou"][k] = token_iou(ta, tb)
        tree_pairs.append((a.tree, b.tree))
        tree_idx.append(k)
    for k, r in zip(
        tree_idx, ted_batch(tree_pairs, ted3_depth, ted_variant, ted_kernel), strict=True
    ):
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
