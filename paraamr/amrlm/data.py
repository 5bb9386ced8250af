"""Prompt / answer pairs of the AMR models from the gold split, and the data settings of a run.

- parser: the sentence -> the serialized graph (:func:`paraamr.amr.serialize.serialize`);
- generator: the graph laid out from its top by the builder's own
  :func:`paraamr.amr.refocus.linearize`, written as :func:`graph_prompt` does (``serialized``:
  without variables, the default; ``penman``: one-line PENMAN with them) -> the sentence.
  ``refocus_copies: k`` adds, per
  training graph, ``k`` copies re-focused on other concepts (seeded; the same sentence), so
  the generator also sees the graph tops the builder will feed it.

Examples:
    >>> import penman
    >>> g = penman.decode("# ::snt He left .\\n(l / leave-11 :ARG0 (h / he))")
    >>> parse_pairs([("He left .", g)])
    [('He left .', '( leave-11 :ARG0 ( he ) )')]
    >>> generate_pairs([("He left .", g)])
    [('( leave-11 :ARG0 ( he ) )', 'He left .')]
    >>> generate_pairs([("He left .", g)], graph_form="penman")
    [('(l / leave-11 :ARG0 (h / he))', 'He left .')]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import penman

from paraamr.amr.refocus import candidate_foci, linearize, refocus
from paraamr.amr.serialize import plain_graph, serialize
from paraamr.errors import ConfigError

__all__ = ["parse_pairs", "generate_pairs", "pairs_for", "graph_prompt", "GRAPH_FORMS", "AMRData"]

#: how the generator reads a graph: without variables (amrlib's serializer) or one-line PENMAN
GRAPH_FORMS = ("serialized", "penman")


def graph_prompt(graph: str | penman.Graph, form: str = "serialized") -> str:
    """The generator's prompt for a graph already laid out from its top (see the module).

    >>> graph_prompt("(l / leave-11 :ARG0 (h / he))"), graph_prompt("(l / leave-11)", "penman")
    ('( leave-11 :ARG0 ( he ) )', '(l / leave-11)')
    """
    if form == "serialized":
        return serialize(graph)
    if form == "penman":
        return plain_graph(graph)
    raise ConfigError(f"model.graph_form must be one of {GRAPH_FORMS}, got {form!r}")


def parse_pairs(items: Sequence[tuple[str, penman.Graph]]) -> list[tuple[str, str]]:
    """``(sentence, serialized graph)`` per ``(sentence, graph)``."""
    return [(s, serialize(g)) for s, g in items]


def generate_pairs(
    items: Sequence[tuple[str, penman.Graph]],
    refocus_copies: int = 0,
    seed: int = 0,
    graph_form: str = "serialized",
) -> list[tuple[str, str]]:
    """``(graph prompt from its top, sentence)`` per item, plus ``refocus_copies``
    re-focused copies of each graph (other foci drawn with ``seed``)."""
    rng = random.Random(seed)
    out = []
    for sentence, graph in items:
        out.append((graph_prompt(linearize(graph), graph_form), sentence))
        if refocus_copies:
            others = [f for f in candidate_foci(graph) if f != graph.top]
            for focus in rng.sample(others, min(refocus_copies, len(others))):
                out.append((graph_prompt(linearize(refocus(graph, focus)), graph_form), sentence))
    return out


def pairs_for(
    direction: str,
    items: Sequence[tuple[str, penman.Graph]],
    refocus_copies: int = 0,
    seed: int = 0,
    graph_form: str = "serialized",
) -> list[tuple[str, str]]:
    """The pairs of ``direction`` (``parse`` or ``generate``)."""
    if direction == "parse":
        return parse_pairs(items)
    return generate_pairs(items, refocus_copies, seed, graph_form)


@dataclass
class AMRData:
    """The data settings of an AMR run (``conf/data/amr.yaml``).

    Args:
        limit_train, limit_dev, limit_test: the first N examples of each file's part.
        refocus_copies: re-focused copies per training graph for the generator.
        batch_size, val_batch_size, num_workers: of the training data module.
        group_by_length: training batches of pairs of similar length (they pad little: 1.11
            padded tokens per real token instead of 2.39 on the training split, and an epoch
            runs 1.75-1.86x faster: ``make bench-amr-batches``).
        loss_norm: ``batch`` (each batch's mean over its answer tokens) or ``corpus`` (its sum
            over the training set's mean answer tokens per batch, so every token weighs the
            same whichever batch it falls in: :func:`paraamr.training.recipe.mean_answer_tokens`).
        silver: a PENMAN file with ``# ::snt`` whose pairs join the training pairs of
            ``silver_directions`` (:mod:`paraamr.amrlm.silver`: the trained parser's graphs of
            unlabeled sentences, ``make amr-silver``).
        silver_directions: the directions that train on ``silver`` (the generator only by
            default: the parser would learn its own mistakes).
        silver_sentences: without ``silver``, the sentences the run's own parser parses
            into silver pairs before the generator trains (``offline``: the data folder's
            candidates; a file: one sentence a line; ``None``: gold pairs only), the first
            ``silver_limit`` of them (:func:`paraamr.amrlm.silver.silver_sentences`).
    """

    limit_train: int | None = None
    limit_dev: int | None = 64
    limit_test: int | None = None
    refocus_copies: int = 0
    batch_size: int = 8
    val_batch_size: int | None = None
    num_workers: int = 0
    group_by_length: bool = False
    loss_norm: str = "batch"
    silver: str | None = None
    silver_directions: Sequence[str] = ("generate",)
    silver_sentences: str | None = None
    silver_limit: int | None = None

    def __post_init__(self) -> None:
        from paraamr.training.recipe import LOSS_NORMS

        if self.loss_norm not in LOSS_NORMS:
            raise ConfigError(f"data.loss_norm must be one of {LOSS_NORMS}, got {self.loss_norm!r}")
        bad = [d for d in self.silver_directions if d not in ("parse", "generate")]
        if bad:
            raise ConfigError(f"data.silver_directions: {bad[0]!r} is not parse or generate")
        if self.silver_limit is not None and self.silver_limit < 1:
            raise ConfigError(f"data.silver_limit: at least 1 or null, got {self.silver_limit}")
        if self.own_silver and "parse" in self.silver_directions:
            raise ConfigError("data.silver_sentences: the parser cannot train on the graphs it "
                              "writes after training; set data.silver_directions=[generate] or "
                              "give a parsed file as data.silver")  # fmt: skip

    @property
    def own_silver(self) -> bool:
        """Whether the run parses its own silver sentences (``silver_sentences`` without a
        ready ``silver`` file, which wins)."""
        return bool(self.silver_sentences) and not self.silver

    def datamodule(self, train_pairs, val_pairs, encode_batch, seed: int):
        """The training data module (:class:`~paraamr.training.data.PairDataModule`)."""
        from paraamr.training.data import PairDataModule

        return PairDataModule(train_pairs, val_pairs, encode_batch, batch_size=self.batch_size,
                              val_batch_size=self.val_batch_size, seed=seed,
                              num_workers=self.num_workers,
                              group_by_length=self.group_by_length)  # fmt: skip
