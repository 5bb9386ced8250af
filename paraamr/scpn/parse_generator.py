"""From a template (the top levels of a tree, e.g. ``(ROOT (S (NP) (VP) (.)))``) to a full target
parse: SCPN's second step.

Two generators:

- :class:`RetrievalParseGenerator`: the most frequent full (word-free) parse among the training
  pairs' target parses that *fits* the template (ties: the first seen);
- :class:`Seq2seqParseGenerator`: an SCPN model trained (``task=parse_generator``) on
  ``source parse <sep> template -> full target parse`` pairs made by
  :func:`parse_generator_pairs` from the same training pairs; an output that is not a tree or
  does not fit the template falls back to retrieval (counted).

A tree fits a template when their roots carry the same label and, wherever the template node has
children, the tree node has as many, each fitting in turn; a template leaf matches any subtree
with its label.

When no training parse fits, retrieval skips (``no_fit="skip"``, the default: ``None``) or takes
the most frequent parse among those whose own template (top ``TEMPLATE_DEPTH`` levels) is
*nearest* to the requested one by tree edit distance (``no_fit="nearest"``; unit costs, the
template cut to the same depth). Every such substitution is counted (``counts_no_fit``), so a
run can report how many outputs follow a neighbouring template instead of the requested one.

>>> g = RetrievalParseGenerator.from_parses(
...     ["(ROOT (S (NP (PRP)) (VP (VBD)) (.)))"] * 2 + ["(ROOT (S (VP (VB)) (.)))"])
>>> g.generate("(ROOT (S (NP) (VP) (.)))")
'(ROOT (S (NP (PRP)) (VP (VBD)) (.)))'
>>> g.generate("(ROOT (S (VP) (.)))")
'(ROOT (S (VP (VB)) (.)))'
>>> g.generate("(ROOT (FRAG))") is None
True
>>> near = RetrievalParseGenerator(g.counts, no_fit="nearest")
>>> near.generate("(ROOT (S (NP) (VP) (, ) (.)))"), dict(near.counts_no_fit)
('(ROOT (S (NP (PRP)) (VP (VBD)) (.)))', {'nearest(ted=1)': 1})
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from paraamr.errors import ParaAMRError, TreeError
from paraamr.metrics.trees import Tree
from paraamr.scpn.formats import linearize, linearize_tree, read_tree
from paraamr.scpn.pairs import TrainPair
from paraamr.utils import write_text_atomic

__all__ = [
    "TemplateError",
    "parse_template",
    "fits",
    "template_of",
    "RetrievalParseGenerator",
    "Seq2seqParseGenerator",
    "parse_generator_pairs",
    "PARSE_INDEX",
]

PARSE_INDEX = "parse_index.json"
TEMPLATE_DEPTH = 3
NO_FIT = ("skip", "nearest")


class TemplateError(TreeError):
    """A template that is not one well-formed word-free tree."""


def parse_template(template: str) -> Tree:
    """Read a template; raise :class:`TemplateError` naming it when malformed.

    >>> parse_template("(ROOT(S(NP)(VP)(.)))")
    ('ROOT', (('S', (('NP', ()), ('VP', ()), ('.', ()))),))
    >>> parse_template("(ROOT (S (NP)")
    Traceback (most recent call last):
    paraamr.scpn.parse_generator.TemplateError: malformed template '(ROOT (S (NP)': unbalanced brackets in '(ROOT (S (NP)'
    >>> parse_template("(ROOT (S (NP dog) (VP) (.)))")
    Traceback (most recent call last):
    paraamr.scpn.parse_generator.TemplateError: template '(ROOT (S (NP dog) (VP) (.)))' has words ('dog'): a template holds labels only, e.g. (ROOT (S (NP) (VP) (.)))
    """  # noqa: E501
    try:
        tree = read_tree(template)
    except TreeError as e:
        raise TemplateError(f"malformed template {template!r}: {e}") from None
    words = _template_words(template)
    if words:
        raise TemplateError(
            f"template {template!r} has words ({', '.join(map(repr, words[:3]))}): a template "
            "holds labels only, e.g. (ROOT (S (NP) (VP) (.)))"
        )
    return tree


def _template_words(template: str) -> list[str]:
    """Tokens of a bracket string that are not a label (the token right after ``(``)."""
    import re

    toks = re.findall(r"\(|\)|[^\s()]+", template)
    return [t for i, t in enumerate(toks) if t not in "()" and (i == 0 or toks[i - 1] != "(")]


def fits(tree: Tree, template: Tree) -> bool:
    """Whether ``tree`` (word-free) has ``template`` as its top (see the module docstring).

    >>> t = read_tree("(ROOT (S (NP (DT) (NN)) (VP (VBD)) (.)))")
    >>> fits(t, read_tree("(ROOT (S (NP) (VP) (.)))")), fits(t, read_tree("(ROOT (S (VP) (.)))"))
    (True, False)
    >>> fits(t, read_tree("(ROOT (S (NP (DT) (NN)) (VP) (.)))"))
    True
    """
    if tree[0] != template[0]:
        return False
    if not template[1]:
        return True
    if len(tree[1]) != len(template[1]):
        return False
    return all(fits(a, b) for a, b in zip(tree[1], template[1], strict=True))


def template_of(parse: str | Tree, depth: int = TEMPLATE_DEPTH) -> str:
    """The template of a word-free parse: its top ``depth`` levels (ROOT = level 1).

    >>> template_of("(ROOT (S (NP (DT) (NN)) (VP (VBD)) (.)))")
    '(ROOT (S (NP) (VP) (.)))'
    """
    return linearize(parse, depth, has_words=False)


class RetrievalParseGenerator:
    """The most frequent training target parse that fits a template.

    Args:
        counts: word-free full parse -> frequency among the training targets (insertion order
            breaks ties).
        no_fit: what a template no training parse fits gets (``NO_FIT``, module docstring).
    """

    name = "retrieval"

    def __init__(self, counts: Counter, no_fit: str = "skip") -> None:
        if no_fit not in NO_FIT:
            raise ParaAMRError(f"no_fit must be one of {NO_FIT}, got {no_fit!r}")
        self.counts = Counter(counts)
        self.no_fit = no_fit
        self.counts_no_fit: Counter = Counter()
        self._ranked = [(read_tree(p), p) for p, _ in self.counts.most_common()]
        self._memo: dict[str, tuple[str | None, str | None]] = {}

    @classmethod
    def from_parses(cls, parses: Iterable[str], no_fit: str = "skip") -> RetrievalParseGenerator:
        return cls(Counter(parses), no_fit)

    @classmethod
    def from_pairs(cls, pairs: Iterable[TrainPair]) -> RetrievalParseGenerator:
        """From the target parses of training pairs (identity pairs included)."""
        return cls.from_parses(p.target_parse for p in pairs if p.target_parse)

    def generate(self, template: str, source_parse: str | None = None) -> str | None:
        """The full parse for ``template`` (``None`` when no training parse fits it and
        ``no_fit="skip"``)."""
        return self.generate_with_fit(template)[0]

    def generate_with_fit(self, template: str) -> tuple[str | None, str | None]:
        """``(parse, how)``: ``how`` is ``"fit"``, ``"nearest(ted=N)"`` (a parse of the nearest
        template, counted in ``counts_no_fit``) or ``None`` (nothing found).

        >>> g = RetrievalParseGenerator.from_parses(["(ROOT (S (VP (VB)) (.)))"], "nearest")
        >>> g.generate_with_fit("(ROOT (S (VP) (.)))"), g.generate_with_fit("(ROOT (NP (.)))")
        (('(ROOT (S (VP (VB)) (.)))', 'fit'), ('(ROOT (S (VP (VB)) (.)))', 'nearest(ted=2)'))
        """
        key = linearize_tree(parse_template(template))
        if key not in self._memo:
            tpl = read_tree(key)
            fit = next((p for t, p in self._ranked if fits(t, tpl)), None)
            if fit is not None:
                self._memo[key] = (fit, "fit")
            else:
                self._memo[key] = (None, None) if self.no_fit == "skip" else self._nearest(tpl)
        parse, how = self._memo[key]
        if how and how != "fit":
            self.counts_no_fit[how] += 1
        return parse, how

    def _nearest(self, template: Tree) -> tuple[str | None, str | None]:
        """The most frequent parse among those whose template is nearest to ``template``."""
        from paraamr.metrics.ted import zss_distance

        target = read_tree(template_of(template, TEMPLATE_DEPTH))
        best: tuple[int, str] | None = None
        seen: dict[str, int] = {}
        for tree, parse in self._ranked:  # most frequent first: the first at a distance wins
            key = template_of(tree, TEMPLATE_DEPTH)
            if key not in seen:
                seen[key] = zss_distance(read_tree(key), target)
            if best is None or seen[key] < best[0]:
                best = (seen[key], parse)
        if best is None:
            return None, None
        return best[1], f"nearest(ted={best[0]})"

    def save(self, path: str | os.PathLike) -> None:
        data = {"generator": "retrieval", "parses": list(self.counts.items())}
        write_text_atomic(path, json.dumps(data))

    @classmethod
    def load(cls, path: str | os.PathLike, no_fit: str = "skip") -> RetrievalParseGenerator:
        if not Path(path).exists():
            raise ParaAMRError(f"no parse index at {path} (written by training: {PARSE_INDEX})")
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(Counter(dict(data["parses"])), no_fit)


def parse_generator_pairs(
    pairs: Iterable[TrainPair], depth: int = TEMPLATE_DEPTH
) -> list[TrainPair]:
    """Pairs ``(source parse, template of the target parse) -> full target parse`` for the
    seq2seq parse generator (input format ``parsegen``)."""
    out = []
    for p in pairs:
        if p.source_parse and p.target_parse:
            out.append(
                TrainPair(
                    p.source, p.target_parse, p.source_parse, template_of(p.target_parse, depth)
                )
            )
    return out


class Seq2seqParseGenerator:
    """A trained parse generator (an :class:`~paraamr.scpn.module.SCPNModule` with input format
    ``parsegen``), with retrieval as the fallback for invalid outputs.

    Args:
        module: the trained module (``SCPNModule.load(model_dir)``).
        fallback: the retrieval generator for outputs that are not a fitting tree.
    """

    name = "seq2seq"

    def __init__(self, module: Any, fallback: RetrievalParseGenerator | None = None) -> None:
        self.module = module
        self.fallback = fallback
        self.counts: Counter = Counter()

    def generate_many(
        self, templates: Sequence[str], source_parses: Sequence[str]
    ) -> list[str | None]:
        """One full parse per (template, source parse)."""
        return [p for p, _ in self.generate_many_with_fit(templates, source_parses)]

    def generate_many_with_fit(
        self, templates: Sequence[str], source_parses: Sequence[str]
    ) -> list[tuple[str | None, str | None]]:
        """``(parse, how)`` per (template, source parse), in one batched generation: ``how`` is
        ``generated``, or ``fallback:<how>`` with retrieval's ``how`` (``None`` if nothing)."""
        fmt = self.module.fmt
        segs = [fmt.segments("", sp, linearize_tree(parse_template(t))) for t, sp in zip(
            templates, source_parses, strict=True)]  # fmt: skip
        outs = self.module.generate_texts(segs)
        result: list[tuple[str | None, str | None]] = []
        for t, out in zip(templates, outs, strict=True):
            try:
                tree = read_tree(out)
                ok = fits(tree, parse_template(t))
            except TreeError:
                ok = False
            if ok:
                self.counts["generated"] += 1
                result.append((linearize_tree(tree), "generated"))
                continue
            self.counts["fallback_retrieval"] += 1
            parse, how = self.fallback.generate_with_fit(t) if self.fallback else (None, None)
            result.append((parse, f"fallback:{how}" if how else None))
        return result

    def generate(self, template: str, source_parse: str | None = None) -> str | None:
        if source_parse is None:
            raise ParaAMRError("the seq2seq parse generator needs the source parse")
        return self.generate_many([template], [source_parse])[0]
