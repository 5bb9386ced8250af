"""Generation and parsing through the shared shard runner (:mod:`paraamr.shards`): sharded,
resumable chunk by chunk, with a progress bar (rate and ETA).

- :func:`generate_samples`: top-p samples for a :func:`~paraamr.top.pairs.sampling_plan`;
  the raw outputs go to stream ``outputs``; :func:`~paraamr.top.pairs.collect_samples` then
  removes and counts invalid trees and counts duplicates.
- :func:`parse_utterances`: a parser's trees for utterances (stream ``parses``), decoded
  from the parser's target format and with the input's own words restored
  (:func:`~paraamr.top.surface.restore_words`).
- :func:`filter_samples`: the auxiliary-parser filter over the shard runner: keep a synthetic
  tree only when the parse of its utterance equals it (:func:`~paraamr.top.evaluate.ap_filter`).

Each chunk's sampling seed is a function of its requests' own seeds, so a resumed or
re-sharded run (same ``chunk_size``) draws the same samples.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from paraamr.shards import ChunkOutput, Shard, merged_rows, run_shard
from paraamr.top.encoding import DecodeError, LabelVocab, decode
from paraamr.top.evaluate import FilterResult, ap_filter
from paraamr.top.pairs import SampleRequest
from paraamr.top.surface import restore_words, tokenizer_normalizer
from paraamr.top.trees import Node, TopTreeError, parse_tree, to_string, utterance

__all__ = ["generate_samples", "parse_utterances", "filter_samples", "decode_parse"]

log = logging.getLogger(__name__)


def _chunk_seed(seeds: Sequence[int]) -> int:
    h = hashlib.blake2b(",".join(map(str, seeds)).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big") >> 1


def _shards(num_shards: int, only: int | None) -> list[Shard]:
    return [Shard(i, num_shards) for i in range(num_shards) if only is None or i == only]


def _sharded(
    items: list,
    process: Callable[[list], ChunkOutput],
    out_dir: str | Path,
    stream: tuple[str, str],
    settings: dict,
    chunk_size: int,
    num_shards: int,
    shard: int | None,
    label: tuple[str, str],
    progress: bool,
) -> list | None:
    """Run ``process`` over ``items`` through the shard runner; the ``stream[1]`` field of the
    merged ``stream[0]`` rows in item order, or ``None`` after one shard of several."""
    name, field = stream
    desc, unit = label
    for sh in _shards(num_shards, shard):
        run_shard(
            sh.select(items),
            process,
            out_dir,
            shard=sh,
            streams=(name,),
            settings=settings,
            chunk_size=chunk_size,
            total=sum(1 for k in range(len(items)) if sh.owns(k)),
            desc=f"{desc} {sh.name}",
            unit=unit,
            progress=progress,
        )
    if shard is not None and num_shards > 1:
        return None
    return [r[field] for r in merged_rows(out_dir, name, order_key="k")]


def generate_samples(
    generate: Callable[..., list[str]],
    requests: Sequence[SampleRequest],
    out_dir: str | Path,
    *,
    settings: dict,
    top_p: float = 0.9,
    chunk_size: int = 32,
    num_shards: int = 1,
    shard: int | None = None,
    progress: bool = True,
) -> list[str] | None:
    """Raw generator outputs aligned with ``requests`` (``None`` when only one shard of
    several was run: merge later by calling again with ``shard=None``).

    Args:
        generate: ``generate(sources, do_sample=True, top_p=..., seed=...) -> texts``
            (:meth:`~paraamr.top.module.TopModule.generate`).
        requests: the sampling plan.
        out_dir: shard directory.
        settings: what identifies the generator (model dir, ...); with ``top_p``, the plan
            size and ``chunk_size`` it guards resumption.
        top_p: nucleus sampling mass.
        chunk_size: requests per generation batch and resume step.
        num_shards: shards; ``shard`` runs only that one (job arrays).
    """
    settings = {
        **settings,
        "top_p": top_p,
        "requests": len(requests),
        "chunk_size": chunk_size,
        "stage": "generate",
    }
    items = list(enumerate(requests))

    def process(chunk: list[tuple[int, SampleRequest]]) -> ChunkOutput:
        reqs = [r for _, r in chunk]
        outs = generate(
            [r.source for r in reqs],
            do_sample=True,
            top_p=top_p,
            seed=_chunk_seed([r.seed for r in reqs]),
        )
        rows = [
            {"k": k, "template": r.template, "sample": r.sample, "seed": r.seed, "output": o}
            for (k, r), o in zip(chunk, outs, strict=True)
        ]
        return ChunkOutput({"outputs": rows}, Counter(generated=len(rows)))

    return _sharded(items, process, out_dir, ("outputs", "output"), settings, chunk_size,
                    num_shards, shard, ("generate", "sample"), progress)  # fmt: skip


def decode_parse(
    text: str,
    source_words: Sequence[str],
    *,
    vocab: LabelVocab | None,
    encoded: bool,
    normalize: Callable[[str], str],
) -> tuple[str | None, bool]:
    """``(tree string or None, words restored)`` for one parser output.

    >>> decode_parse("[in:a there ' s in:a]", ["there", "'s"], vocab=None, encoded=True,
    ...              normalize=str.lower)
    ("[IN:A there 's ]", True)
    >>> decode_parse("[IN:A x", ["x"], vocab=None, encoded=False, normalize=str.lower)
    (None, False)
    """
    try:
        tree = decode(text, vocab) if encoded else parse_tree(text)
    except (TopTreeError, DecodeError):
        return None, False
    tree, ok = restore_words(tree, source_words, normalize)
    return to_string(tree), ok


def parse_utterances(
    module: Any,
    utterances: Sequence[str],
    out_dir: str | Path,
    *,
    settings: dict,
    vocab: LabelVocab | None,
    encoded: bool = True,
    num_beams: int = 1,
    chunk_size: int = 32,
    num_shards: int = 1,
    shard: int | None = None,
    progress: bool = True,
    desc: str = "parse",
) -> list[str | None] | None:
    """Parser trees (TOP strings, ``None`` = not a valid tree) aligned with ``utterances``."""
    settings = {
        **settings,
        "num_beams": num_beams,
        "n": len(utterances),
        "encoded": encoded,
        "chunk_size": chunk_size,
        "stage": desc,
    }
    normalize = tokenizer_normalizer(getattr(module, "tokenizer", None))
    items = list(enumerate(utterances))

    def process(chunk: list[tuple[int, str]]) -> ChunkOutput:
        outs = module.generate([u for _, u in chunk], num_beams=num_beams)
        rows, counts = [], Counter()
        for (k, u), o in zip(chunk, outs, strict=True):
            tree, ok = decode_parse(o, u.split(), vocab=vocab, encoded=encoded, normalize=normalize)
            counts["invalid" if tree is None else "valid"] += 1
            counts["words_not_restored"] += tree is not None and not ok
            rows.append({"k": k, "utterance": u, "output": o, "tree": tree})
        return ChunkOutput({"parses": rows}, counts)

    return _sharded(items, process, out_dir, ("parses", "tree"), settings, chunk_size,
                    num_shards, shard, (desc, "utt"), progress)  # fmt: skip


def filter_samples(
    module: Any,
    synthetic: Sequence[Node],
    out_dir: str | Path,
    **kwargs: Any,
) -> FilterResult | None:
    """The auxiliary-parser filter: parse each synthetic utterance (sharded, resumable) and
    keep the samples whose parse equals the synthetic tree."""
    parses = parse_utterances(
        module, [utterance(t) for t in synthetic], out_dir, desc="ap-filter", **kwargs
    )
    if parses is None:
        return None
    return ap_filter(list(synthetic), parses)
