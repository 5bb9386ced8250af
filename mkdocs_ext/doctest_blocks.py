r"""A griffe extension for the API page: doctest examples written in a docstring's prose (not
under an ``Examples:`` section) render as code blocks.

Without it Markdown reads ``>>> x["row"]`` as a quote holding the reference link ``["row"]``,
which mkdocs-autorefs cannot resolve (a warning, so ``mkdocs build --strict`` fails, with some
versions of autorefs), and the example shows as a nested quote. Each run of lines that starts
with ``>>>`` at the left margin, outside a Google section and outside a fence, up to the next
blank line, becomes a fenced ``pycon`` block. ``Examples:`` sections are left to griffe, which
renders them already.

Examples:
    >>> prompt = ">" * 3  # a doctest cannot show its own prompt in its output
    >>> text = fence_doctests(f'Say.\n\n{prompt} f(["a"])\n1\n\nDone.')
    >>> text.splitlines()
    ['Say.', '', '```pycon', '>>> f(["a"])', '1', '```', '', 'Done.']
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["DoctestBlocks", "fence_doctests"]

#: Google-style section titles (griffe's parser): their bodies are indented and parsed by griffe
_SECTION = re.compile(
    r"^(Args|Arguments|Params|Parameters|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Yields?|Receives?|Raises|Exceptions|Warns|Warnings?|Examples?|Notes?|"
    r"Attributes|Functions|Methods|Classes|Modules|Type Aliases|Todo|See Also|References)\s*:\s*$"
)


def fence_doctests(text: str) -> str:
    """``text`` with each doctest run of its prose wrapped in a ``pycon`` fence."""
    out: list[str] = []
    in_section = in_fence = in_doctest = False
    for line in text.splitlines():
        at_margin = bool(line) and not line[0].isspace()
        if in_doctest and not line.strip():
            out.append("```")
            in_doctest = False
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and at_margin:
            if _SECTION.match(line):
                in_section = True
            elif in_section:
                in_section = False
            if not in_section and not in_doctest and line.startswith(">>>"):
                out.append("```pycon")
                in_doctest = True
        out.append(line)
    if in_doctest:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence the prose doctests of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
