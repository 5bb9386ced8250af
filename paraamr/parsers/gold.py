"""Gold parses stored in the corpus records (``text_parse`` / ``para_parse``).

The gold backend does no parsing: :mod:`paraamr.diversity.scoring` takes trees from the records;
this class only validates a stored tree string and derives its tokens (the tree's leaves).
"""

from __future__ import annotations

from collections.abc import Sequence

from paraamr.errors import ParserError, TreeError
from paraamr.metrics.trees import leaves, parse_bracketed
from paraamr.parsers.types import Parsed

__all__ = ["GoldParser"]


class GoldParser:
    name = "gold"

    def signature(self) -> str:
        return "gold(record-fields:text_parse,para_parse)"

    def parse_tree(self, tree: str | None) -> Parsed | ParserError:
        """Validate one stored tree.

        >>> GoldParser().parse_tree("(ROOT (NP (NN cat)))").tokens
        ('cat',)
        >>> isinstance(GoldParser().parse_tree(None), ParserError)
        True
        """
        if not tree:
            return ParserError("missing gold parse (text_parse / para_parse)")
        try:
            return Parsed(tuple(leaves(parse_bracketed(tree))), " ".join(tree.split()))
        except TreeError as e:
            return ParserError(f"unparsable gold tree: {e}")

    def parse(self, sentences: Sequence[str]) -> list[Parsed | ParserError]:
        """Sentences cannot be parsed without their stored trees: always a clear failure."""
        return [
            ParserError("parser=gold needs text_parse/para_parse fields in the records")
            for _ in sentences
        ]
