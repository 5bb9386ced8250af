"""How well TED on projected spaCy trees agrees with TED on gold Penn Treebank trees.

The gold trees of a PTB sample (``wsj_*.mrg``) are cleaned (:func:`clean_ptb`), their words are
parsed by spaCy with the gold tokenisation (one sentence per tree: spaCy is not allowed to split
it), and each parse is projected to a phrase-structure tree by
:func:`paraamr.parsers.projection.project_sentence`. Random pairs of distinct sentences are then
scored with TED-F (full tree) and TED-3 (depth 3, the default ``paraamr`` preset) on both sides,
and the rank (Spearman) and linear (Pearson) correlations between the gold and projected
distances are reported.

Run it as::

    python -m paraamr.parsers.agreement --data-dir /work/shared/data --pairs 2000 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from statistics import mean
from typing import Any

from paraamr.errors import DataNotFoundError, InputError, cli_errors
from paraamr.metrics.ted import VARIANTS, ted_trees
from paraamr.metrics.trees import Tree, clean_ptb, leaves, parse_many
from paraamr.parsers.projection import project_sentence
from paraamr.parsers.spacy_backend import DEFAULT_SPACY_MODEL as DEFAULT_MODEL

__all__ = ["DEFAULT_MODEL", "load_gold_trees", "project_words", "measure_agreement", "main"]


# PTB escapes brackets; spaCy's tagger expects the characters themselves.
_PTB_TO_TEXT = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]"}


def load_gold_trees(ptb_dir: str | Path, max_sentences: int | None = None) -> list[Tree]:
    """Read and clean every tree of the ``*.mrg`` files of ``ptb_dir`` (files sorted by name).

    Args:
        ptb_dir: folder holding ``.mrg`` files (e.g. ``.../ptb-sample/combined``).
        max_sentences: keep only the first ``max_sentences`` trees (``None``: all).

    Returns:
        The cleaned trees (trees left empty by cleaning are dropped).

    Raises:
        DataNotFoundError: if the folder has no ``.mrg`` file.
    """
    files = sorted(Path(ptb_dir).glob("*.mrg"))
    if not files:
        raise DataNotFoundError(f"no .mrg files in {ptb_dir}")
    trees: list[Tree] = []
    for path in files:
        for tree in parse_many(path.read_text(encoding="utf-8")):
            cleaned = clean_ptb(tree)
            if cleaned is not None:
                trees.append(cleaned)
            if max_sentences is not None and len(trees) >= max_sentences:
                return trees
    return trees


def project_words(
    sentences: list[list[str]], nlp: Any, batch_size: int = 256, progress: bool = False
) -> list[Tree]:
    """Parse pre-tokenised sentences with spaCy (one sentence each) and project them.

    Args:
        sentences: the words of each sentence (PTB bracket escapes such as ``-LRB-`` are accepted).
        nlp: a loaded spaCy pipeline with a tagger and a dependency parser.
        batch_size: spaCy batch size.
        progress: print a progress line to stderr every few batches.

    Returns:
        One projected tree per sentence, in order.
    """
    from spacy.tokens import Doc

    def make(words: list[str]) -> Doc:
        words = [_PTB_TO_TEXT.get(w, w) for w in words]
        # Preset boundaries: the parser keeps the whole tree as one sentence.
        starts = [True] + [False] * (len(words) - 1) if words else None
        return Doc(nlp.vocab, words=words, sent_starts=starts)

    trees: list[Tree] = []
    docs = (make(words) for words in sentences)
    for doc in nlp.pipe(docs, batch_size=batch_size):
        trees.append(project_sentence(doc[:]))
        if progress and len(trees) % (batch_size * 4) == 0:
            print(f"  parsed {len(trees)}/{len(sentences)}", file=sys.stderr, flush=True)
    return trees


def _correlations(x: list[float], y: list[float]) -> tuple[float, float]:
    from scipy.stats import pearsonr, spearmanr

    return float(spearmanr(x, y)[0]), float(pearsonr(x, y)[0])


def measure_agreement(
    ptb_dir: str | Path,
    n_pairs: int = 2000,
    seed: int = 0,
    nlp: Any = None,
    max_sentences: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Correlate TED on projected spaCy trees with TED on gold PTB trees over random pairs.

    Args:
        ptb_dir: folder of ``.mrg`` files.
        n_pairs: number of random pairs of distinct sentences.
        seed: seed of the ``random.Random`` drawing the pairs.
        nlp: a loaded spaCy pipeline; ``None`` loads :data:`DEFAULT_MODEL` (without NER and
            lemmatiser).
        max_sentences: use only the first ``max_sentences`` trees.
        progress: print progress to stderr.

    Returns:
        ``n_sentences``, ``n_pairs``, ``seed``, Spearman and Pearson correlations for TED-F and
        TED-3 (``spearman_tedf``, ``spearman_ted3``, ``pearson_tedf``, ``pearson_ted3``), the mean
        distances on both sides (``mean_ted3_gold`` ...), ``spacy_model`` and ``spacy_version``.

    Raises:
        DataNotFoundError: if ``ptb_dir`` has no ``.mrg`` file.
        ValueError: if fewer than two sentences are available.
    """
    import spacy

    if nlp is None:
        nlp = spacy.load(DEFAULT_MODEL, exclude=["ner", "lemmatizer"])
    gold = load_gold_trees(ptb_dir, max_sentences)
    if len(gold) < 2:
        raise InputError("need at least two sentences to draw pairs")
    if progress:
        print(f"{len(gold)} gold trees from {ptb_dir}", file=sys.stderr, flush=True)
    projected = project_words([leaves(t) for t in gold], nlp, progress=progress)

    rng = random.Random(seed)
    pairs = [tuple(rng.sample(range(len(gold)), 2)) for _ in range(n_pairs)]
    scores: dict[str, list[float]] = {k: [] for k in ("gf", "pf", "g3", "p3")}
    for i, j in pairs:
        scores["gf"].append(ted_trees(gold[i], gold[j]))
        scores["pf"].append(ted_trees(projected[i], projected[j]))
        scores["g3"].append(ted_trees(gold[i], gold[j], depth=3))
        scores["p3"].append(ted_trees(projected[i], projected[j], depth=3))
    s_f, p_f = _correlations(scores["gf"], scores["pf"])
    s_3, p_3 = _correlations(scores["g3"], scores["p3"])
    return {
        "n_sentences": len(gold),
        "n_pairs": n_pairs,
        "seed": seed,
        "spearman_tedf": s_f,
        "spearman_ted3": s_3,
        "pearson_tedf": p_f,
        "pearson_ted3": p_3,
        "mean_ted3_gold": mean(scores["g3"]),
        "mean_ted3_projected": mean(scores["p3"]),
        "mean_tedf_gold": mean(scores["gf"]),
        "mean_tedf_projected": mean(scores["pf"]),
        "spacy_model": f"{nlp.meta.get('lang', 'en')}_{nlp.meta.get('name', '?')}"
        f"-{nlp.meta.get('version', '?')}",
        "spacy_version": spacy.__version__,
        "ted_variant": VARIANTS["paraamr"].describe(),
    }


@cli_errors("python -m paraamr.parsers.agreement")
def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints the result as JSON (and writes it to ``--out``)."""
    ap = argparse.ArgumentParser(prog="python -m paraamr.parsers.agreement", description=__doc__)
    ap.add_argument(
        "--data-dir",
        default=None,
        help="folder holding ptb-sample/ (default: $PARAAMR_DATA or ../shared/data)",
    )
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-sentences", type=int, default=None)
    ap.add_argument("--out", default=None, help="also write the JSON result to this file")
    args = ap.parse_args(argv)

    from paraamr.datadir import resolve_data_dir

    ptb_dir = resolve_data_dir(args.data_dir) / "ptb-sample" / "combined"
    start = time.perf_counter()
    result = measure_agreement(
        ptb_dir, args.pairs, args.seed, max_sentences=args.max_sentences, progress=True
    )
    result["wall_s"] = round(time.perf_counter() - start, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
