"""A deterministic rule-based stand-in for the syntax-controlled paraphraser. FOR TESTS ONLY.

Its outputs are string rewrites keyed on the template's top constituent, not paraphrases of any
quality: use it to check the augmentation plumbing (labels kept, drops counted, files written)
offline, never to measure what augmentation does.

>>> RuleParaphraserForTests().paraphrase(["The cat sat ."], ["(ROOT (S (VP) (.)))"])
[['note that the cat sat .']]
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RuleParaphraserForTests"]

_PREFIX = {
    "(ROOT (S (NP) (VP) (.)))": "in fact , ",
    "(ROOT (S (VP) (.)))": "note that ",
    "(ROOT (NP (NP) (.)))": "the fact that ",
}


class RuleParaphraserForTests:
    """TEST-ONLY paraphraser (:class:`paraamr.fewshot.augment.Paraphraser` interface): prefixes
    the lower-cased sentence with a phrase per template. Templates listed in ``copy`` return the
    input unchanged, those in ``skip`` return ``None`` (to exercise the drops)."""

    def __init__(self, copy: Sequence[str] = (), skip: Sequence[str] = ()) -> None:
        self.copy, self.skip = set(copy), set(skip)
        self.calls = 0

    def signature(self) -> str:
        return "rule-based-test-stand-in(not-a-paraphraser)"

    def paraphrase(self, sentences: list[str], templates: list[str]) -> list[list[str | None]]:
        self.calls += 1
        out: list[list[str | None]] = []
        for s in sentences:
            row: list[str | None] = []
            for t in templates:
                if t in self.skip:
                    row.append(None)
                elif t in self.copy:
                    row.append(s)
                else:
                    low = s[:1].lower() + s[1:]
                    row.append(_PREFIX.get(t, "so , ") + low)
            out.append(row)
        return out
