"""Put the input's own words back into a parse decoded through a lossy tokenizer.

An uncased WordPiece model (the offline MiniLM) lowercases, strips accents and splits
punctuation, so a parse of ``there 's Chicago`` decodes as ``there ' s chicago``. A parser
must output the words of its input, so :func:`restore_words` re-segments the predicted
terminals onto the input words: the predicted terminals, normalised and concatenated without
spaces, must equal the input words normalised the same way, and every run of terminals
between two brackets must start and end on an input word boundary; the run is then replaced
by the input words it covers. Otherwise the tree is returned unchanged (and will not match
the gold tree). Cased byte-level BPE models (BART) decode exactly; restoration is then a
no-op.

>>> from paraamr.top.trees import parse_tree, to_string
>>> t = parse_tree("[IN:A there ' s [SL:B chicago ] ]")
>>> tree, ok = restore_words(t, ["there", "'s", "Chicago"], str.lower)
>>> to_string(tree), ok
("[IN:A there 's [SL:B Chicago ] ]", True)
>>> restore_words(parse_tree("[IN:A there ' [SL:B s chicago ] ]"), ["there", "'s", "Chicago"],
...               str.lower)[1]
False
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from paraamr.top.trees import Node

__all__ = ["restore_words", "tokenizer_normalizer"]


def tokenizer_normalizer(tokenizer) -> Callable[[str], str]:
    """The character normalisation a Hugging Face tokenizer applies (identity if none).

    >>> tokenizer_normalizer(object())("Ab")
    'Ab'
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    norm = getattr(backend, "normalizer", None)
    if norm is None:
        return lambda s: s
    return norm.normalize_str


def _squash(s: str, normalize: Callable[[str], str]) -> str:
    return "".join(normalize(s).split())


def restore_words(
    tree: Node, source_words: Sequence[str], normalize: Callable[[str], str]
) -> tuple[Node, bool]:
    """``(tree with the input's words, True)`` or ``(tree unchanged, False)`` (module doc)."""
    normed = [_squash(w, normalize) for w in source_words]
    bounds = {0}
    pos = 0
    starts: dict[int, int] = {0: 0}
    for i, w in enumerate(normed):
        pos += len(w)
        bounds.add(pos)
        starts[pos] = i + 1
    target = "".join(normed)
    cursor = [0]
    ok = [True]

    def walk(node: Node) -> Node:
        children: list = []
        run: list[str] = []

        def flush() -> None:
            if not run:
                return
            a = cursor[0]
            text = "".join(_squash(t, normalize) for t in run)
            b = a + len(text)
            if target[a:b] != text or a not in bounds or b not in bounds or a == b:
                ok[0] = False
                children.extend(run)
            else:
                children.extend(source_words[starts[a] : starts[b]])
            cursor[0] = b
            run.clear()

        for c in node.children:
            if isinstance(c, Node):
                flush()
                children.append(walk(c))
            else:
                run.append(c)
        flush()
        return Node(node.label, tuple(children))

    out = walk(tree)
    if not ok[0] or cursor[0] != len(target):
        return tree, False
    return out, True
