"""Exact match, the auxiliary-parser filter and low-resource subsamples (pure functions).

Exact match is :func:`paraamr.top.trees.same_tree`: whitespace-normalised canonical strings,
case-sensitive, an invalid prediction matches nothing. Accuracy is reported in percent,
overall and per template-frequency bucket of the training set (the paper's Tables 2-3).

The filter (Tran & Tan, §2): an auxiliary parser trained on the real data parses each
synthetic utterance; a synthetic sample is kept only when the parse equals the synthetic
tree. The low-resource setting (§3) trains on one utterance per training template, drawn at
random, over 5 subsamples.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from paraamr.errors import InputError
from paraamr.top.templates import BUCKETS, bucket_of, template_string
from paraamr.top.trees import Node, TopTreeError, canonical, parse_tree, utterance
from paraamr.utils import map_length_batches

__all__ = [
    "MatchCount",
    "FilterResult",
    "exact_match",
    "exact_match_report",
    "ap_filter",
    "ap_filter_with",
    "one_per_template",
    "low_resource_subsamples",
]


def exact_match(pred: Node | str | None, gold: Node | str) -> bool:
    """Whether a predicted tree equals the gold tree (see :func:`~paraamr.top.trees.same_tree`).

    >>> exact_match("[IN:A  x ]", "[IN:A x ]"), exact_match("[IN:A x", "[IN:A x ]")
    (True, False)
    """
    try:
        g = canonical(gold)
    except TopTreeError as e:
        raise InputError(f"gold tree is invalid: {e}") from e
    if pred is None:
        return False
    try:
        return canonical(pred) == g
    except TopTreeError:
        return False


@dataclass
class MatchCount:
    """Correct / total for one group; ``invalid`` = predictions that are not valid trees."""

    n: int = 0
    correct: int = 0
    invalid: int = 0

    @property
    def exact_match(self) -> float | None:
        """Percent correct (``None`` for an empty group)."""
        return 100.0 * self.correct / self.n if self.n else None

    def as_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "correct": self.correct,
            "invalid": self.invalid,
            "exact_match": self.exact_match,
        }


def exact_match_report(
    preds: Sequence[Node | str | None],
    golds: Sequence[Node | str],
    train_counts: Mapping[str, int] | None = None,
) -> dict[str, MatchCount]:
    """Exact match overall and, given the training template counts, per bucket.

    Args:
        preds: parser outputs, aligned with ``golds`` (``None`` = no output).
        golds: gold trees.
        train_counts: template counts of the training set (``template_counts(train)``).

    Returns:
        ``{"overall": ..., "f>=5": ..., "f<5": ..., "f=0": ...}`` (buckets only with
        ``train_counts``).

    >>> from collections import Counter
    >>> r = exact_match_report(["[IN:A x ]", "[IN:B y", "[IN:C z ]"],
    ...                        ["[IN:A x ]", "[IN:B y ]", "[IN:C w ]"],
    ...                        Counter({"[IN:A [mask] ]": 9, "[IN:B [mask] ]": 1}))
    >>> {k: (v.n, v.correct, v.invalid) for k, v in r.items()}
    {'overall': (3, 1, 1), 'f>=5': (1, 1, 0), 'f<5': (1, 0, 1), 'f=0': (1, 0, 0)}
    """
    if len(preds) != len(golds):
        raise InputError(f"{len(preds)} predictions for {len(golds)} gold trees")
    groups = ["overall", *(BUCKETS if train_counts is not None else ())]
    out = {g: MatchCount() for g in groups}
    for p, g in zip(preds, golds, strict=True):
        gold = g if isinstance(g, Node) else parse_tree(g)
        hit = exact_match(p, gold)
        bad = p is None or (not isinstance(p, Node) and not _valid(p))
        keys = ["overall"]
        if train_counts is not None:
            keys.append(bucket_of(train_counts.get(template_string(gold), 0)))
        for k in keys:
            out[k].n += 1
            out[k].correct += hit
            out[k].invalid += bad
    return out


def _valid(text: str) -> bool:
    try:
        parse_tree(text)
    except TopTreeError:
        return False
    return True


@dataclass
class FilterResult:
    """Outcome of the auxiliary-parser filter.

    Attributes:
        kept: the synthetic trees whose parse matched, in input order.
        kept_index: their positions in the input.
        dropped: samples whose parse is a valid tree different from the synthetic one.
        invalid: samples whose parse is not a valid tree (or missing).
    """

    kept: list[Node] = field(default_factory=list)
    kept_index: list[int] = field(default_factory=list)
    dropped: int = 0
    invalid: int = 0

    @property
    def total(self) -> int:
        return len(self.kept) + self.dropped + self.invalid

    def summary(self) -> dict[str, int]:
        return {
            "total": self.total,
            "kept": len(self.kept),
            "dropped": self.dropped,
            "invalid": self.invalid,
        }


def ap_filter(synthetic: Sequence[Node], parses: Sequence[Node | str | None]) -> FilterResult:
    """Keep each synthetic tree whose auxiliary parse equals it.

    Args:
        synthetic: synthetic trees (their utterances are what the parser read).
        parses: the parser's output for each synthetic utterance, aligned.

    >>> from paraamr.top.trees import parse_tree
    >>> syn = [parse_tree("[IN:A x ]"), parse_tree("[IN:A y ]"), parse_tree("[IN:B z ]")]
    >>> r = ap_filter(syn, ["[IN:A x ]", "[IN:B y ]", "[IN:B z"])
    >>> r.kept_index, r.summary()
    ([0], {'total': 3, 'kept': 1, 'dropped': 1, 'invalid': 1})
    """
    if len(synthetic) != len(parses):
        raise InputError(f"{len(parses)} parses for {len(synthetic)} synthetic samples")
    res = FilterResult()
    for i, (tree, parse) in enumerate(zip(synthetic, parses, strict=True)):
        if parse is None:
            res.invalid += 1
            continue
        try:
            got = parse if isinstance(parse, Node) else parse_tree(parse)
        except TopTreeError:
            res.invalid += 1
            continue
        if got == tree:
            res.kept.append(tree)
            res.kept_index.append(i)
        else:
            res.dropped += 1
    return res


def ap_filter_with(
    synthetic: Sequence[Node],
    parse: Callable[[list[str]], Sequence[Node | str | None]],
    batch_size: int = 64,
) -> FilterResult:
    """:func:`ap_filter` with a parser callable (utterances -> tree strings), in length-sorted
    batches (:func:`paraamr.utils.map_length_batches`; a batch answered with another number of
    parses is a ``ValueError``).

    >>> from paraamr.top.trees import parse_tree
    >>> syn = [parse_tree("[IN:A x ]"), parse_tree("[IN:A y ]")]
    >>> ap_filter_with(syn, lambda us: [f"[IN:A {u} ]" if u == "x" else "[IN:B y ]" for u in us]
    ...                ).kept_index
    [0]
    """
    texts = [utterance(t) for t in synthetic]
    parses = map_length_batches(texts, lambda batch: list(parse(batch)), batch_size)
    return ap_filter(synthetic, parses)


def _template_groups(trees: Iterable[Node]) -> list[list[int]]:
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(trees):
        groups.setdefault(template_string(t), []).append(i)
    return list(groups.values())


def _pick(groups: list[list[int]], seed: int) -> list[int]:
    rng = random.Random(seed)
    return sorted(rng.choice(members) for members in groups)


def one_per_template(trees: Iterable[Node], seed: int) -> list[int]:
    """Indices of one tree per template, chosen uniformly at random (seeded), in input order.

    >>> from paraamr.top.trees import parse_tree
    >>> ts = [parse_tree(s) for s in ["[IN:A x ]", "[IN:A y ]", "[IN:B z ]", "[IN:A w ]"]]
    >>> idx = one_per_template(ts, seed=0)
    >>> len(idx), 2 in idx
    (2, True)
    """
    return _pick(_template_groups(trees), seed)


def low_resource_subsamples(
    trees: Sequence[Node], n_subsamples: int = 5, seed: int = 0
) -> list[list[int]]:
    """The paper's low-resource splits: ``n_subsamples`` draws of :func:`one_per_template`,
    with seeds ``seed, seed + 1, ...``.

    >>> from paraamr.top.trees import parse_tree
    >>> ts = [parse_tree(s) for s in ["[IN:A x ]", "[IN:A y ]", "[IN:B z ]"]]
    >>> [len(s) for s in low_resource_subsamples(ts)]
    [2, 2, 2, 2, 2]
    """
    groups = _template_groups(trees)
    return [_pick(groups, seed + k) for k in range(n_subsamples)]
