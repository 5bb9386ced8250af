"""What the generator and the parsers train on, what the generator is asked for, and what
is done with its outputs (pure functions; the models come later).

- :func:`generator_pairs`: ``(encoded template, encoded tree)`` for the infilling generator.
- :func:`parser_pairs`: ``(utterance, tree)`` for the auxiliary and target parsers.
- :func:`sampling_plan`: templates drawn uniformly from the *unique* seen templates (not by
  frequency, so the long tail gets as many samples as the head), ``k`` samples each, every
  request with its own stable seed so a sharded or resumed run draws the same samples.
- :func:`collect_samples`: decode generator outputs; invalid trees are removed and counted
  by kind, duplicates of training trees and template mismatches are counted.

>>> from paraamr.top.trees import parse_tree
>>> train = [parse_tree("[IN:A x [SL:B y ] ]"), parse_tree("[IN:A z [SL:B w ] ]")]
>>> generator_pairs(train)[0]
('[in:a [mask] [sl:b [mask] sl:b] in:a]', '[in:a x [sl:b y sl:b] in:a]')
>>> parser_pairs(train)[1]
('z w', '[IN:A z [SL:B w ] ]')
>>> [(r.template, r.sample) for r in sampling_plan(train, samples_per_template=2)]
[('[IN:A [mask] [SL:B [mask] ] ]', 0), ('[IN:A [mask] [SL:B [mask] ] ]', 1)]
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from paraamr.errors import ConfigError, InputError
from paraamr.top.encoding import DecodeError, LabelVocab, decode, encode
from paraamr.top.templates import parse_template, template, template_string
from paraamr.top.trees import Node, to_string, utterance

__all__ = [
    "SampleRequest",
    "GenerationReport",
    "generator_pairs",
    "parser_pairs",
    "unique_templates",
    "sampling_plan",
    "collect_samples",
]

SAMPLES_PER_TEMPLATE = 5  # the paper's setting


def generator_pairs(trees: Iterable[Node]) -> list[tuple[str, str]]:
    """``(source, target)`` pairs for the generator: encoded template -> encoded tree."""
    return [(encode(template(t)), encode(t)) for t in trees]


def parser_pairs(trees: Iterable[Node], *, encoded: bool = False) -> list[tuple[str, str]]:
    """``(utterance, tree)`` pairs for a parser.

    Args:
        trees: annotated trees.
        encoded: targets in the generator's encoding (lowercased labels, named closing
            brackets) instead of TOP strings; decode predictions with
            :func:`~paraamr.top.encoding.decode` before scoring.
    """
    return [(utterance(t), encode(t) if encoded else to_string(t)) for t in trees]


def unique_templates(trees: Iterable[Node]) -> list[str]:
    """Unique template strings in first-seen order.

    >>> from paraamr.top.trees import parse_tree
    >>> unique_templates(parse_tree(s) for s in ["[IN:B x ]", "[IN:A y ]", "[IN:B z ]"])
    ['[IN:B [mask] ]', '[IN:A [mask] ]']
    """
    return list(dict.fromkeys(template_string(t) for t in trees))


@dataclass(frozen=True)
class SampleRequest:
    """One generator call: fill ``template`` once.

    Attributes:
        template: template string (``[IN:A [mask] ... ]``).
        source: its encoding (the generator's input).
        sample: 0-based sample number for this template.
        seed: sampling seed for this request, a stable function of the plan seed, the
            template and ``sample``.
    """

    template: str
    source: str
    sample: int
    seed: int

    @property
    def key(self) -> str:
        """Identifier for sharded/resumable runs."""
        return f"{self.seed:016x}"


def _request_seed(seed: int, tmpl: str, sample: int) -> int:
    h = hashlib.blake2b(f"{seed}\x1f{tmpl}\x1f{sample}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big") >> 1


def sampling_plan(
    templates: Iterable[Node | str],
    samples_per_template: int = SAMPLES_PER_TEMPLATE,
    n_templates: int | None = None,
    seed: int = 0,
) -> list[SampleRequest]:
    """Generator requests: each chosen template ``samples_per_template`` times.

    Args:
        templates: training trees or template strings; duplicates collapse, so every seen
            template is equally likely whatever its frequency (the paper draws ``z``
            uniformly).
        samples_per_template: samples per template (paper: 5).
        n_templates: draw this many templates uniformly without replacement; ``None`` takes
            every seen template once (the paper: 5 x ~6K templates).
        seed: plan seed.

    >>> plan = sampling_plan(["[IN:A [mask] ]", "[IN:A [mask] ]", "[IN:B [mask] ]"], 5)
    >>> len(plan), Counter(r.template for r in plan)["[IN:A [mask] ]"]
    (10, 5)
    """
    if samples_per_template < 1:
        raise ConfigError(f"samples_per_template must be >= 1, got {samples_per_template}")
    uniq: list[str] = list(
        dict.fromkeys(
            template_string(t) if isinstance(t, Node) else to_string(parse_template(t))
            for t in templates
        )
    )
    if n_templates is not None:
        if not 0 <= n_templates <= len(uniq):
            raise ConfigError(f"n_templates={n_templates} but {len(uniq)} templates are seen")
        uniq = random.Random(seed).sample(uniq, n_templates)
    out = []
    for tmpl in uniq:
        src = encode(parse_template(tmpl))
        for k in range(samples_per_template):
            out.append(SampleRequest(tmpl, src, k, _request_seed(seed, tmpl, k)))
    return out


@dataclass
class GenerationReport:
    """Counts over generator outputs.

    Attributes:
        requested: outputs examined.
        valid: outputs that decode to a tree.
        invalid: invalid outputs by :data:`~paraamr.top.encoding.DECODE_ERROR_KINDS` kind.
        template_mismatch: valid trees whose template is not the requested one.
        duplicate_of_train: valid trees identical to a training tree.
        duplicate_in_synthetic: valid trees identical to an earlier synthetic tree.
        kept: trees returned.
    """

    requested: int = 0
    valid: int = 0
    invalid: Counter = field(default_factory=Counter)
    template_mismatch: int = 0
    duplicate_of_train: int = 0
    duplicate_in_synthetic: int = 0
    kept: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "requested": self.requested,
            "generated": self.requested,
            "valid": self.valid,
            "template_matching": self.valid - self.template_mismatch,
            "invalid": sum(self.invalid.values()),
            "invalid_by_kind": dict(self.invalid),
            "template_mismatch": self.template_mismatch,
            "duplicate_of_train": self.duplicate_of_train,
            "duplicate_in_synthetic": self.duplicate_in_synthetic,
            "kept": self.kept,
        }


def collect_samples(
    requests: Sequence[SampleRequest],
    outputs: Sequence[str],
    *,
    vocab: LabelVocab | None = None,
    train: Iterable[Node] = (),
    drop_template_mismatch: bool = False,
    drop_train_duplicates: bool = False,
    drop_synthetic_duplicates: bool = False,
) -> tuple[list[tuple[SampleRequest, Node]], GenerationReport]:
    """Decode generator outputs (aligned with ``requests``) into synthetic trees.

    Invalid outputs are always removed (and counted by kind); the other checks are counted
    and, when their ``drop_*`` flag is set, removed as well. The paper removes only invalid
    trees; the auxiliary-parser filter (:func:`paraamr.top.evaluate.ap_filter`) runs after.

    >>> from paraamr.top.trees import parse_tree
    >>> plan = sampling_plan(["[IN:A [mask] ]"], 4)
    >>> outs = ["[in:a x in:a]", "[in:a x in:a]", "[in:a y", "[in:a q [sl:b r sl:b] in:a]"]
    >>> kept, rep = collect_samples(plan, outs, train=[parse_tree("[IN:A y ]")])
    >>> len(kept), rep.as_dict()["invalid_by_kind"], rep.duplicate_in_synthetic
    (3, {'unbalanced': 1}, 1)
    >>> rep.template_mismatch
    1
    """
    if len(requests) != len(outputs):
        raise InputError(f"{len(outputs)} outputs for {len(requests)} requests")
    train_set = {to_string(t) for t in train}
    seen: set[str] = set()
    rep = GenerationReport()
    kept: list[tuple[SampleRequest, Node]] = []
    for req, text in zip(requests, outputs, strict=True):
        rep.requested += 1
        try:
            tree = decode(text, vocab)
        except DecodeError as e:
            rep.invalid[e.kind] += 1
            continue
        rep.valid += 1
        s = to_string(tree)
        drop = False
        if template_string(tree) != req.template:
            rep.template_mismatch += 1
            drop |= drop_template_mismatch
        if s in train_set:
            rep.duplicate_of_train += 1
            drop |= drop_train_duplicates
        if s in seen:
            rep.duplicate_in_synthetic += 1
            drop |= drop_synthetic_duplicates
        seen.add(s)
        if not drop:
            kept.append((req, tree))
    rep.kept = len(kept)
    return kept, rep
