"""AMR graphs as variable-free token sequences and back, and Smatch between graphs.

A sequence model writes a graph as amrlib's ``PenmanSerializer`` does: the PENMAN tree with
each variable replaced by its concept (``(c / cry-01 :ARG0 (h / he))`` → ``( cry-01 :ARG0 ( he
) )``; a concept used twice is told apart by a suffix, ``person_0`` / ``person_1``; a re-entrant
node is its concept again, without brackets). :func:`deserialize` restores the variables with
amrlib's error-tolerant ``PenmanDeSerializer`` and returns ``None`` for a sequence it cannot
turn into a graph, so a caller counts the failure instead of losing it.

:func:`smatch_counts` and :func:`smatch_score` score graphs with the ``smatch`` package (the
field's scorer; amrlib's ``smatch_enhanced`` wraps the same code): corpus precision, recall and
F1 are computed from the matched, test and gold triple counts summed over pairs, as ``smatch.py``
does for a file of graphs. Smatch's hill climbing starts from random mappings: the module's
random state is seeded per call, so a score is the same on every run.

Examples:
    >>> g = "(c / cry-01 :ARG0 (h / he) :polarity -)"
    >>> serialize(g)
    '( cry-01 :ARG0 ( he ) :polarity - )'
    >>> import penman
    >>> penman.encode(deserialize(serialize(g)), indent=None)
    '(c / cry-01 :ARG0 (h / he) :polarity -)'
    >>> smatch_score([g], [g])
    {'precision': 1.0, 'recall': 1.0, 'f1': 1.0, 'pairs': 1, 'unreadable': 0}
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence

import penman

from paraamr.errors import AMRError
from paraamr.utils import logger_level

__all__ = ["serialize", "deserialize", "plain_graph", "smatch_counts", "smatch_score",
           "PLACEHOLDER", "is_placeholder", "states_an_edge_twice", "dangling_edges"]  # fmt: skip

#: the one-node graph ``paraamr amr parse`` writes for a line that yields no graph, so its output
#: stays aligned with its input; the builder rejects it at stage ``parse`` (never generates from it)
PLACEHOLDER = "(e / amr-empty)"


def is_placeholder(graph: penman.Graph) -> bool:
    """Whether ``graph`` is :data:`PLACEHOLDER` (whatever its variable and metadata).

    >>> is_placeholder(penman.decode("# ::snt x\\n(e / amr-empty)"))
    True
    >>> is_placeholder(penman.decode("(e / empty-01)"))
    False
    """
    return [t[2] for t in graph.triples] == ["amr-empty"] and graph.triples[0][1] == ":instance"


def states_an_edge_twice(graph: penman.Graph) -> bool:
    """Whether ``graph`` holds one triple twice. Count on the graph as read from PENMAN
    (:func:`penman.decode` stores ``(b :ARG1-of a)`` as ``(a :ARG1 b)``), which is how the
    builder and every reader see a written file: two edges that differ only in direction are
    then one edge twice.

    >>> states_an_edge_twice(penman.decode("(s / silent :ARG1-of (t / silent-01 :ARG1 s))"))
    True
    >>> states_an_edge_twice(penman.decode("(s / silent :ARG1-of (t / silent-01))"))
    False
    """
    return len(set(graph.triples)) < len(graph.triples)


def dangling_edges(graph: penman.Graph) -> list[tuple]:
    """The triples of ``graph`` with no target or no role name: what penman (and amrlib's
    tolerant deserializer) make of ``(o / over :ARG1)`` or a lone ``:``. No generator can lay
    such an edge out, and it is no AMR, so the graph is refused, not repaired.

    >>> dangling_edges(penman.decode("(o / over :ARG1 :time (d / day))"))
    [('o', ':ARG1', None)]
    >>> dangling_edges(penman.decode("(o / over :time (d / day))"))
    []
    """
    return [t for t in graph.triples if t[2] is None or t[1] == ":"]


def plain_graph(graph: str | penman.Graph) -> str:
    """One-line PENMAN of ``graph`` without its metadata (what Smatch and the models read)."""
    g = penman.decode(graph) if isinstance(graph, str) else graph
    return penman.encode(penman.Graph(g.triples, top=g.top), indent=None)


def serialize(graph: str | penman.Graph) -> str:
    """The variable-free token sequence of ``graph`` (amrlib's ``PenmanSerializer``)."""
    from amrlib.models.parse_xfm.penman_serializer import PenmanSerializer

    return PenmanSerializer(plain_graph(graph)).get_graph_string()


def deserialize(tokens: str) -> penman.Graph | None:
    """The graph of a serialized sequence with its variables restored, or ``None`` when
    amrlib's tolerant deserializer cannot build one (it logs why; silenced here) or builds one
    with a :func:`dangling_edges` edge (``( over: 100 :ARG1 …`` reads as ``over`` with a role
    ``:`` and no target)."""
    from amrlib.models.parse_xfm.penman_serializer import PenmanDeSerializer

    with (logger_level("amrlib.models.parse_xfm.penman_serializer", logging.CRITICAL),
          logger_level("penman", logging.ERROR)):  # fmt: skip
        graph = PenmanDeSerializer(tokens).get_pen_graph()
    if graph is None or graph.top is None or not graph.triples or dangling_edges(graph):
        return None
    return graph


def smatch_counts(test: str, gold: str, *, seed: int = 0) -> tuple[int, int, int]:
    """``(matched, test, gold)`` triple counts of one pair of one-line graphs.

    smatch's reader prints why it cannot read a graph on stderr; that message goes into the
    error instead (a parse scored with such answers stays quiet and counts them).

    Raises:
        AMRError: smatch cannot read one of the graphs (its reader's message in the text).
    """
    import io

    import amr as smatch_reader  # smatch's graph reader, the module that prints
    import smatch

    state, said, log = random.getstate(), io.StringIO(), smatch_reader.ERROR_LOG
    random.seed(seed)
    smatch_reader.ERROR_LOG = said
    try:
        best, n_test, n_gold = smatch.get_amr_match(test, gold)
    except Exception as e:  # smatch's reader fails with AttributeError / IndexError on bad input
        why = " ".join(said.getvalue().split())
        raise AMRError(f"smatch cannot read the pair: {type(e).__name__}: {e}"
                       + (f" ({why})" if why else "")) from None  # fmt: skip
    finally:
        smatch_reader.ERROR_LOG = log
        smatch.match_triple_dict.clear()
        random.setstate(state)
    return int(best), int(n_test), int(n_gold)


def smatch_score(
    tests: Iterable[str | penman.Graph | None], golds: Sequence[str | penman.Graph]
) -> dict[str, float | int]:
    """Corpus Smatch of ``tests`` against ``golds`` (same order); a ``None`` test (a sequence
    that did not deserialize) matches nothing and still counts its gold triples.

    A test graph smatch's reader cannot read (penman writes it, but a concept such as ``x:y``
    breaks smatch) also matches nothing: its triples count as penman reads them, plus the top
    smatch adds, and it is counted in ``unreadable``. A gold graph smatch cannot read raises
    :class:`~paraamr.errors.AMRError`.

    >>> smatch_score([None], ["(h / he)"])["recall"]
    0.0
    """
    matched = n_test = n_gold = pairs = unreadable = 0
    for test, gold in zip(tests, golds, strict=True):
        gold_line = plain_graph(gold)
        pairs += 1
        if test is not None:
            test_line = plain_graph(test)
            try:
                m, t, g = smatch_counts(test_line, gold_line)
            except AMRError:
                unreadable += 1
                graph = test if isinstance(test, penman.Graph) else penman.decode(test)
                n_test += len(graph.triples) + 1  # + smatch's TOP
            else:
                matched, n_test, n_gold = matched + m, n_test + t, n_gold + g
                continue
        n_gold += smatch_counts(gold_line, gold_line)[2]
    precision = matched / n_test if n_test else 0.0
    recall = matched / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "pairs": pairs, "unreadable": unreadable}  # fmt: skip
