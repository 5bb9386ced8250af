"""The decoding settings a trained SCPN model can be evaluated with, written once: no repeated
word n-grams (:mod:`paraamr.lms.repeats`), a word cap (:mod:`paraamr.scpn.wordcap`) and
template-forced decoding (:mod:`paraamr.scpn.forced`). The job's config, the module, the
``paraamr paraphrase`` command, the job's signature and result, and Table 6's row names all go
through :class:`Decoding`.

>>> d = Decoding.of({"no_repeat_words": 4, "word_cap": [1.5, 3], "force_template": True})
>>> d.signature_parts()
['no-repeat-words:4', 'word-cap:1.5x+3', 'forced-template:slot-cap']
>>> d.row_label()
', no repeated 4-grams, word cap 1.5x+3, template forced'
>>> Decoding.of({}).fields()
{'no_repeat_words': None, 'word_cap': None, 'force_template': False}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paraamr.scpn.wordcap import cap_name

__all__ = ["Decoding", "FIELDS"]

#: the settings, as config keys, module attributes and result fields
FIELDS = ("no_repeat_words", "word_cap", "force_template")


@dataclass(frozen=True)
class Decoding:
    """``no_repeat_words``: no word n-gram of this size twice in an answer (``None``: off);
    ``word_cap``: ``(ratio, extra)``, at most ``ceil(ratio * source words + extra)`` words
    (``None``: off); ``force_template``: decode inside the prompt's template."""

    no_repeat_words: int | None = None
    word_cap: tuple[float, ...] | None = None
    force_template: bool = False

    @classmethod
    def of(cls, settings: Any) -> Decoding:
        """From a mapping (a config's ``model`` group, a job result) or an object with the three
        attributes (a loaded module); missing settings are off."""
        get = (
            settings.get
            if isinstance(settings, Mapping) or hasattr(settings, "get")
            else (lambda k, d=None: getattr(settings, k, d))
        )
        cap = get("word_cap", None)
        return cls(
            no_repeat_words=get("no_repeat_words", None),
            word_cap=tuple(cap) if cap else None,
            force_template=bool(get("force_template", False) or False),
        )

    @staticmethod
    def given(**settings: Any) -> dict[str, Any]:
        """The settings a caller gave (``None``: keep the model's own), as keyword arguments
        for :meth:`paraamr.scpn.module.SCPNModule.load`.

        >>> Decoding.given(no_repeat_words=None, word_cap=[1.5, 3], force_template=None)
        {'word_cap': [1.5, 3]}
        """
        unknown = set(settings) - set(FIELDS)
        if unknown:
            raise TypeError(f"unknown decoding settings: {sorted(unknown)}")
        return {k: v for k, v in settings.items() if v is not None}

    def fields(self) -> dict[str, Any]:
        """The three settings as a job writes them (``word_cap`` as a list)."""
        cap = list(self.word_cap) if self.word_cap is not None else None
        return {"no_repeat_words": self.no_repeat_words, "word_cap": cap,
                "force_template": self.force_template}  # fmt: skip

    def signature_parts(self) -> list[str]:
        """The recipe signature's parts for the settings that are on."""
        parts = []
        if self.no_repeat_words:
            parts.append(f"no-repeat-words:{self.no_repeat_words}")
        if self.word_cap:
            parts.append("word-cap:" + cap_name(self.word_cap))
        if self.force_template:  # a cap is then kept inside the slots
            parts.append("forced-template" + (":slot-cap" if self.word_cap else ""))
        return parts

    def row_label(self) -> str:
        """What Table 6 appends to a row's name for the settings that are on."""
        label = ""
        if self.no_repeat_words:
            label += f", no repeated {self.no_repeat_words}-grams"
        if self.word_cap:
            label += f", word cap {cap_name(self.word_cap)}"
        if self.force_template:
            label += ", template forced"
        return label
