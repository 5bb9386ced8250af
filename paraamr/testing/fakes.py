"""A deterministic rule-based AMR → text "generator" for tests and demos.

It reads the concepts of a one-line PENMAN graph in layout order and joins their lemmas, so the
effect of re-focusing (a different root, a different order) is visible without any model. It is
not a paraphraser; its output says so in every signature.

>>> ConceptGenerator().generate(["(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"])
[('want boy go .', False)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["ConceptGenerator"]

_CONCEPT = re.compile(r"/\s+([^\s()]+)")


class ConceptGenerator:
    """Concepts in layout order, sense numbers stripped; graphs containing ``fail_on`` raise
    (to test failure isolation)."""

    def __init__(self, fail_on: str | None = None):
        self.fail_on = fail_on

    def signature(self) -> str:
        return "concept-sequence-baseline(not-a-model)"

    def generate(self, graphs: Sequence[str]) -> list[tuple[str, bool]]:
        out = []
        for g in graphs:
            if self.fail_on and self.fail_on in g:
                raise RuntimeError(f"generator failure on a graph containing {self.fail_on!r}")
            words = [re.sub(r"-\d+$", "", c).strip('"') for c in _CONCEPT.findall(g)]
            out.append((" ".join(words) + " .", False))
        return out
