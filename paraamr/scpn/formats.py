"""Input formats of syntactically controlled paraphrasing: how (source, parses) become model input.

A parse is linearized *without words*: word leaves are dropped, part-of-speech tags become the
leaves, every node is bracketed (``(NP (DT) (NN))``), and a tree may be pruned to a depth (the
outermost bracket is depth 1), all with :mod:`paraamr.metrics.trees`.

Presets (:data:`FORMATS`), each named in the signature:

==============  ===========================================================================
``scpn``        ``source <sep> full target parse`` (SCPN / the ParaAMR paper's setting)
``aesop``       ``source <sep> source parse <sep> target parse``, both pruned to a height
                (AESOP, Sun et al. 2021; default height 4)
``skeleton``    ``target parse (depth <= 4) <sep> source`` (the input measured offline)
``noparse``     ``source`` alone (the "no parse" baseline: same model, no syntax)
``parsegen``    ``source parse <sep> template`` (input of the seq2seq parse generator)
==============  ===========================================================================

An input is a tuple of *segments* with a maximum length each (source: ``max_source_length``
tokens, parses: ``max_syntax_length``), joined with the separator by the collator, so truncating
a long source never cuts the parse off.

>>> t = linearize("(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"); t
'(ROOT (S (NP (PRP)) (VP (VBP) (NP (PRP))) (.)))'
>>> linearize(t, depth=3, has_words=False)
'(ROOT (S (NP) (VP) (.)))'
>>> f = get_format("aesop", depth=3)
>>> f.text("I know it.", t, t)
'I know it. <sep> (ROOT (S (NP) (VP) (.))) <sep> (ROOT (S (NP) (VP) (.)))'
>>> f.signature()
'fmt:aesop,src-parse:d3,tgt-parse:d3,sep:<sep>'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from paraamr.errors import ConfigError, TreeError
from paraamr.metrics.trees import Tree, parse_bracketed, prune, strip_words

__all__ = [
    "FORMATS",
    "InputFormat",
    "get_format",
    "linearize",
    "linearize_tree",
    "read_tree",
    "height",
]

SEP = "<sep>"


def read_tree(tree: str | Tree) -> Tree:
    """A tree from a bracket string (or a tree as is); raises :class:`TreeError` if malformed."""
    return parse_bracketed(tree) if isinstance(tree, str) else tree


def linearize_tree(tree: Tree) -> str:
    """Write a (word-free) tree with every node bracketed.

    >>> linearize_tree(("S", (("NP", ()), ("VP", ()))))
    '(S (NP) (VP))'
    """
    label, children = tree
    if not children:
        return f"({label})"
    return f"({label} " + " ".join(linearize_tree(c) for c in children) + ")"


def linearize(tree: str | Tree, depth: int | None = None, *, has_words: bool = True) -> str:
    """A parse as model input: words dropped, pruned to ``depth``, every node bracketed.

    ``has_words=True`` (a parser's output): the word leaves are dropped and the part-of-speech
    tags become the leaves. ``has_words=False``: the tree is already word-free (a template, a
    generated parse, the output of this function), whose childless nodes are tags and kept.

    >>> linearize("(NP (DT the) (NN cat))"), linearize("(NP (DT) (NN))", has_words=False)
    ('(NP (DT) (NN))', '(NP (DT) (NN))')

    Raises:
        TreeError: the string is not one well-formed tree.
    """
    t = read_tree(tree)
    if has_words:
        t = strip_words(t)
    return linearize_tree(prune(t, depth))


def height(tree: str | Tree) -> int:
    """Depth of the deepest node (a single node: 1).

    >>> height("(ROOT (S (NP) (VP) (.)))")
    3
    """
    label, children = read_tree(tree)
    return 1 + max((height(c) for c in children), default=0)


@dataclass(frozen=True)
class InputFormat:
    """How an example is laid out.

    Args:
        name: the preset name.
        order: segment names in order, from ``source``, ``source_parse``, ``target_parse``.
        source_depth: pruning depth of the source parse (``None``: full).
        target_depth: pruning depth of the target parse (``None``: full).
        sep: the separator written between segments.
    """

    name: str
    order: tuple[str, ...]
    source_depth: int | None = None
    target_depth: int | None = None
    sep: str = SEP

    @property
    def needs_source_parse(self) -> bool:
        return "source_parse" in self.order

    @property
    def needs_target_parse(self) -> bool:
        return "target_parse" in self.order

    def segments(
        self,
        source: str,
        source_parse: str | Tree | None = None,
        target_parse: str | Tree | None = None,
    ) -> tuple[tuple[str, str], ...]:
        """``((text, kind), ...)`` with kind ``source`` or ``syntax`` (its length budget).

        Parses are word-free (:func:`linearize` of a parser's tree, a template, a generated
        parse); they are pruned here to the format's depths.

        Raises:
            TreeError: a needed parse is missing or malformed.
        """
        out = []
        for part in self.order:
            if part == "source":
                out.append((source, "source"))
                continue
            tree = source_parse if part == "source_parse" else target_parse
            if tree is None:
                raise TreeError(f"input format {self.name!r} needs the {part.replace('_', ' ')}")
            depth = self.source_depth if part == "source_parse" else self.target_depth
            out.append((linearize(tree, depth, has_words=False), "syntax"))
        return tuple(out)

    def text(self, source: str, source_parse=None, target_parse=None) -> str:
        """The segments joined by the separator (what a reader of the logs sees).

        >>> get_format("scpn").text("Hi .", None, "(ROOT (INTJ (UH) (.)))")
        'Hi . <sep> (ROOT (INTJ (UH) (.)))'
        """
        segs = self.segments(source, source_parse, target_parse)
        return f" {self.sep} ".join(s for s, _ in segs)

    def signature(self) -> str:
        def d(x: int | None) -> str:
            return "full" if x is None else f"d{x}"

        parts = [f"fmt:{self.name}"]
        if self.needs_source_parse:
            parts.append(f"src-parse:{d(self.source_depth)}")
        if self.needs_target_parse:
            parts.append(f"tgt-parse:{d(self.target_depth)}")
        parts.append(f"sep:{self.sep}")
        return ",".join(parts)


FORMATS: dict[str, InputFormat] = {
    "scpn": InputFormat("scpn", ("source", "target_parse")),
    "aesop": InputFormat("aesop", ("source", "source_parse", "target_parse"), 4, 4),
    "skeleton": InputFormat("skeleton", ("target_parse", "source"), None, 4),
    "noparse": InputFormat("noparse", ("source",)),
    # the seq2seq parse generator: source parse <sep> template -> full target parse
    "parsegen": InputFormat("parsegen", ("source_parse", "target_parse")),
}


def get_format(
    name: str, depth: int | None | str = "default", sep: str | None = None
) -> InputFormat:
    """A preset, optionally with another pruning depth (both parses) or separator.

    >>> get_format("skeleton").target_depth, get_format("skeleton", depth=None).target_depth
    (4, None)
    """
    if name not in FORMATS:
        raise ConfigError(
            f"model.input_format: unknown format {name!r}; choose one of {list(FORMATS)}"
        )
    f = FORMATS[name]
    if depth != "default":
        if depth is not None and int(depth) < 1:
            raise ConfigError(f"model.parse_depth must be >= 1 or null, got {depth}")
        f = replace(f, source_depth=depth, target_depth=depth)
    if sep is not None:
        f = replace(f, sep=sep)
    return f
