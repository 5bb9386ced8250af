"""Templates of TOP trees and their statistics.

The template of a tree is the tree with every maximal run of consecutive terminals (the
words between two bracket tokens) replaced by one ``[mask]`` token (Tran & Tan, §1):

>>> from paraamr.top.trees import parse_tree
>>> template_string(parse_tree("[IN:GET_DISTANCE How far is [SL:DESTINATION the shop ] ]"))
'[IN:GET_DISTANCE [mask] [SL:DESTINATION [mask] ] ]'

Test examples are bucketed by how often their template occurs in the training set
(:data:`BUCKETS`: ``f>=5``, ``f<5`` meaning 1 to 4, and ``f=0`` unseen), as in the paper's
Table 3.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.errors import InputError
from paraamr.top.trees import MASK, Node, parse_tree, to_string

__all__ = [
    "BUCKETS",
    "TemplateStats",
    "template",
    "template_string",
    "parse_template",
    "template_counts",
    "template_stats",
    "bucket_of",
    "bucket_counts",
    "matches_template",
    "plot_rank_frequency",
]

BUCKETS = ("f>=5", "f<5", "f=0")


def template(node: Node) -> Node:
    """The tree with each maximal run of terminals replaced by one ``[mask]``.

    >>> from paraamr.top.trees import parse_tree, to_string
    >>> to_string(template(parse_tree("[IN:A a b [SL:B c ] d [SL:C [IN:D e ] ] ]")))
    '[IN:A [mask] [SL:B [mask] ] [mask] [SL:C [IN:D [mask] ] ] ]'
    """
    out: list[Node | str] = []
    for c in node.children:
        if isinstance(c, Node):
            out.append(template(c))
        elif not out or out[-1] != MASK:
            out.append(MASK)
    return Node(node.label, tuple(out))


def template_string(node: Node) -> str:
    """Canonical string of :func:`template`."""
    return to_string(template(node))


def parse_template(text: str) -> Node:
    """Read a template string (a tree whose terminals are ``[mask]``; empty spans allowed).

    >>> parse_template("[IN:A [mask] [SL:B [mask] ] ]").label
    'IN:A'
    """
    return parse_tree(text, masks=True, allow_empty=True)


def template_counts(trees: Iterable[Node]) -> Counter[str]:
    """How many trees have each template (keys: template strings, first-seen order).

    >>> from paraamr.top.trees import parse_tree
    >>> c = template_counts(parse_tree(s) for s in ["[IN:A x ]", "[IN:A y z ]", "[IN:B x ]"])
    >>> c.most_common()
    [('[IN:A [mask] ]', 2), ('[IN:B [mask] ]', 1)]
    """
    return Counter(template_string(t) for t in trees)


def bucket_of(freq: int, threshold: int = 5) -> str:
    """Frequency bucket of a template seen ``freq`` times in training.

    >>> [bucket_of(f) for f in (0, 1, 4, 5, 100)]
    ['f=0', 'f<5', 'f<5', 'f>=5', 'f>=5']
    """
    if freq < 0:
        raise InputError(f"frequency must be >= 0, got {freq}")
    if freq == 0:
        return "f=0"
    return "f>=5" if freq >= threshold else "f<5"


def bucket_counts(trees: Iterable[Node], train_counts: Mapping[str, int]) -> dict[str, int]:
    """Number of ``trees`` in each frequency bucket of :data:`BUCKETS`.

    >>> from paraamr.top.trees import parse_tree
    >>> train = Counter({"[IN:A [mask] ]": 7, "[IN:B [mask] ]": 2})
    >>> bucket_counts([parse_tree("[IN:A q ]"), parse_tree("[IN:C q ]")], train)
    {'f>=5': 1, 'f<5': 0, 'f=0': 1}
    """
    out = dict.fromkeys(BUCKETS, 0)
    for t in trees:
        out[bucket_of(train_counts.get(template_string(t), 0))] += 1
    return out


def matches_template(tree: Node, tmpl: Node | str) -> bool:
    """Whether ``tree`` has template ``tmpl`` (a generated tree should fill its template).

    >>> from paraamr.top.trees import parse_tree
    >>> matches_template(parse_tree("[IN:A x [SL:B y ] ]"), "[IN:A [mask] [SL:B [mask] ] ]")
    True
    """
    want = tmpl if isinstance(tmpl, str) else to_string(tmpl)
    return template_string(tree) == " ".join(want.split())


@dataclass(frozen=True)
class TemplateStats:
    """Template statistics of one set of trees.

    Attributes:
        n_examples: trees counted.
        n_templates: unique templates.
        top: the most frequent templates with their counts, most frequent first.
        top10_share: share of examples whose template is one of the 10 most frequent.
        singleton_templates: templates seen exactly once.
        singleton_example_share: share of examples whose template is seen once
            (``singleton_templates / n_examples``).
        freq_of_freq: how many templates occur exactly ``k`` times, for each ``k``.
        powerlaw_slope: least-squares slope of log(frequency) on log(rank) over all
            templates (a power law gives a straight line; this is its slope, not a fit test).
    """

    n_examples: int
    n_templates: int
    top: list[tuple[str, int]]
    top10_share: float
    singleton_templates: int
    singleton_example_share: float
    freq_of_freq: dict[int, int] = field(default_factory=dict)
    powerlaw_slope: float | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "n_examples": self.n_examples,
            "n_templates": self.n_templates,
            "top": [{"template": t, "count": c} for t, c in self.top],
            "top10_share": self.top10_share,
            "singleton_templates": self.singleton_templates,
            "singleton_example_share": self.singleton_example_share,
            "freq_of_freq": {str(k): v for k, v in sorted(self.freq_of_freq.items())},
            "powerlaw_slope": self.powerlaw_slope,
        }


def _slope(freqs: list[int]) -> float | None:
    if len(freqs) < 2:
        return None
    xs = [math.log(r) for r in range(1, len(freqs) + 1)]
    ys = [math.log(f) for f in freqs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def template_stats(counts: Mapping[str, int], top_k: int = 10) -> TemplateStats:
    """Summarise template counts (from :func:`template_counts`).

    >>> s = template_stats(Counter({"a": 3, "b": 1}))
    >>> s.n_examples, s.n_templates, s.singleton_templates, s.top10_share
    (4, 2, 1, 1.0)
    """
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    n = sum(c for _, c in ranked)
    if n == 0:
        raise InputError("no trees to summarise")
    singles = sum(1 for _, c in ranked if c == 1)
    return TemplateStats(
        n_examples=n,
        n_templates=len(ranked),
        top=ranked[:top_k],
        top10_share=sum(c for _, c in ranked[:10]) / n,
        singleton_templates=singles,
        singleton_example_share=singles / n,
        freq_of_freq=dict(sorted(Counter(c for _, c in ranked).items())),
        powerlaw_slope=_slope([c for _, c in ranked]),
    )


def plot_rank_frequency(
    counts: Mapping[str, int], stem: str | os.PathLike, title: str = "TOP templates"
) -> list[Path]:
    """Log-log rank/frequency plot of template counts: ``<stem>.png`` and ``<stem>.pdf``."""
    from paraamr.figures import new_figure, save_figure

    freqs = sorted(counts.values(), reverse=True)
    fig = new_figure(5, 3.6)
    ax = fig.axes[0]
    ax.loglog(range(1, len(freqs) + 1), freqs, marker=".", linestyle="none", markersize=3)
    ax.set_xlabel("template rank")
    ax.set_ylabel("training utterances with the template")
    ax.set_title(f"{title}: {len(freqs):,} templates, {sum(freqs):,} utterances", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    stem = Path(stem)
    return save_figure(fig, stem.with_suffix("") if stem.suffix else stem, dpi=150)
