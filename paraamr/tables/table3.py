"""Table 3 of the ParaAMR paper: for a few sources shared by every corpus, each corpus's
paraphrases side by side, here with their TED-3 to the source and their cosine similarity.

``paraamr humaneval examples NAME=FILE[:format] ... --k 5 --out examples.md`` writes the
markdown and ``examples.json`` beside it. Sources are drawn with the human-evaluation kit's draw
(:func:`paraamr.humaneval.sample.draw_sources`): seeded, common to all corpora, copies of the
source left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import read_corpus
from paraamr.corpus.records import same_sentence
from paraamr.corpus.specs import CorpusSpec
from paraamr.humaneval.sample import draw_sources
from paraamr.markdown import markdown_grid
from paraamr.signature import Signature, package_versions
from paraamr.utils import write_text_atomic

__all__ = ["draw_examples", "score_examples", "render_examples", "write_examples"]


def draw_examples(
    specs: Sequence[CorpusSpec], k: int, seed: int = 0, max_per_corpus: int = 3,
    on_error: str = "raise", lowercase_keys: bool = False,
) -> list[dict]:  # fmt: skip
    """``k`` sources with up to ``max_per_corpus`` non-copy paraphrases of each corpus:
    ``[{"source": s, "paraphrases": {corpus: [{"text": p}, ...]}}]``; the source shown is the
    first corpus's. ``lowercase_keys``: sources match across corpora case-insensitively (a
    corpus the builder lowercased beside cased ones, as Table 2's ``lowercase_keys``)."""
    corpora = {s.name: (lambda s=s: read_corpus(s.path, s.fmt, SkipLog(on_error))) for s in specs}
    drawn, _ = draw_sources(corpora, k, np.random.default_rng(seed), lowercase_keys)
    out = []
    for i in range(k):
        src = drawn[specs[0].name][i].text
        paras = {}
        for s in specs:
            r = drawn[s.name][i]
            texts = list(dict.fromkeys(p.text for p in r.paraphrases
                                       if not same_sentence(r.text, p.text)))  # fmt: skip
            paras[s.name] = [{"text": t} for t in texts[:max_per_corpus]]
        out.append({"source": src, "paraphrases": paras})
    return out


def score_examples(examples: list[dict], parser, encoder, ted_variant: str = "paraamr") -> None:
    """Add ``ted3`` (pruned to depth 3, the project's TED) and ``similarity`` (cosine) to every
    paraphrase, in place; a sentence the parser fails on gets ``ted3: None``."""
    from paraamr.metrics.pairwise import Similarity, TreeEdit
    from paraamr.parsers.base import parse_unique

    pairs = [(e["source"], p["text"]) for e in examples for ps in e["paraphrases"].values()
             for p in ps]  # fmt: skip
    parsed = parse_unique([x for pair in pairs for x in pair], parser)
    sims = Similarity(encoder, "").pair_scores(pairs)
    ted = TreeEdit(ted_variant, 3)
    n = 0
    for e in examples:
        for ps in e["paraphrases"].values():
            for p in ps:
                a, b = parsed[e["source"]], parsed[p["text"]]
                ok = not isinstance(a, Exception) and not isinstance(b, Exception)
                p["ted3"] = ted.sentence_score(a.tree, b.tree) if ok else None
                p["similarity"] = float(sims[n])
                n += 1


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_examples(examples: list[dict], signature: str = "") -> str:
    """Markdown: one small table per source (the paper's Table 3 layout, plus the metrics)."""
    lines = ["# Table 3 (examples): each corpus's paraphrases of the same sources", ""]
    for n, e in enumerate(examples, 1):
        body = [["**source**", _cell(e["source"]), "", ""]]
        for corpus, ps in e["paraphrases"].items():
            for i, p in enumerate(ps):
                ted = "n/a" if p.get("ted3") is None else f"{p['ted3']:g}"
                sim = f"{p['similarity']:.3f}" if "similarity" in p else ""
                body.append([corpus if i == 0 else "", _cell(p["text"]), ted, sim])
        lines += [f"## Source {n}", ""]
        lines += markdown_grid(["dataset", "sentence", "TED-3", "similarity"], body)
        lines.append("")
    if signature:
        lines += [f"Signature: `{signature}`", ""]
    return "\n".join(lines)


def write_examples(
    specs: Sequence[CorpusSpec],
    out: str | os.PathLike,
    k: int = 5,
    seed: int = 0,
    max_per_corpus: int = 3,
    parser=None,
    encoder=None,
    encoder_name: str = "minilm",
    on_error: str = "raise",
    lowercase_keys: bool = False,
) -> dict[str, Path]:
    """Draw, score (when a parser and an encoder are given) and write ``out`` (markdown) and
    ``out`` with ``.json``."""
    examples = draw_examples(specs, k, seed, max_per_corpus, on_error, lowercase_keys)
    fields: list[tuple[str, object]] = [("paraamr", package_versions()["paraamr"]),
                                        ("corpora", "+".join(s.name for s in specs)),
                                        ("k", k), ("seed", seed)]  # fmt: skip
    if lowercase_keys:
        fields.append(("keys", "lowercase"))
    if parser is not None and encoder is not None:
        score_examples(examples, parser, encoder)
        fields += [("ted3", "paraamr-depth3"), ("parser", parser.signature()),
                   ("sim", f"cos({encoder_name})")]  # fmt: skip
    sig = Signature.build(*fields)
    md = Path(out)
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text(render_examples(examples, sig), encoding="utf-8")
    js = md.with_suffix(".json")
    write_text_atomic(js, json.dumps({"signature": sig, "examples": examples}, indent=1,
                                     ensure_ascii=False))  # fmt: skip
    return {"md": md, "json": js}
