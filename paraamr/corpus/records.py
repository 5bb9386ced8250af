"""The canonical corpus record: one source sentence and its paraphrases (ParaAMR release format).

On disk (JSON lines)::

    {"text": "...", "paraphrases": [{"para_text": "...", "perplexity": 27.1}, ...]}

Extra fields are kept. Optional gold parses: ``text_parse`` on the record, ``para_parse`` on a
paraphrase.

Examples:
    >>> r = SourceRecord.from_json({"text": "Hi.", "paraphrases": [{"para_text": "Hello."}]})
    >>> r.paraphrases[0].text, r.to_json()["paraphrases"][0]["para_text"]
    ('Hello.', 'Hello.')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Paraphrase", "SourceRecord", "normalize_key", "same_sentence"]


def normalize_key(text: str, lowercase: bool = False) -> str:
    """The key two corpora's sources are matched on: whitespace collapsed, optionally lowercased.

    >>> normalize_key("  The  cat\\tsat. ")
    'The cat sat.'
    """
    key = " ".join(text.split())
    return key.lower() if lowercase else key


def same_sentence(a: str, b: str) -> bool:
    """Whether a paraphrase merely repeats its source (whitespace- and case-insensitive), the test
    the ParaAMR scripts use to drop such pairs.

    >>> same_sentence("He left.", "he  left.")
    True
    """
    return normalize_key(a, lowercase=True) == normalize_key(b, lowercase=True)


@dataclass(frozen=True)
class Paraphrase:
    text: str
    perplexity: float | None = None
    parse: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"para_text": self.text}
        if self.perplexity is not None:
            out["perplexity"] = self.perplexity
        if self.parse is not None:
            out["para_parse"] = self.parse
        out.update(self.extra)
        return out


@dataclass
class SourceRecord:
    """A source sentence with its paraphrases and where it was read from (for error messages)."""

    text: str
    paraphrases: list[Paraphrase]
    parse: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    line: int | None = None
    index: int | None = None  # position in the (subset) stream, set by sharding

    @classmethod
    def from_json(cls, obj: dict[str, Any], path: str | None = None, line: int | None = None):
        """Build from a parsed JSON object; raises ``KeyError``/``TypeError`` on a bad shape."""
        text = obj["text"]
        paras = []
        for p in obj.get("paraphrases", []):
            if not isinstance(p, dict):
                raise TypeError(f"paraphrase entries must be objects, got {type(p).__name__}")
            extra = {
                k: v for k, v in p.items() if k not in ("para_text", "perplexity", "para_parse")
            }
            ppl = p.get("perplexity")
            paras.append(
                Paraphrase(
                    text=p["para_text"],
                    perplexity=None if ppl is None else float(ppl),
                    parse=p.get("para_parse"),
                    extra=extra,
                )
            )
        extra = {k: v for k, v in obj.items() if k not in ("text", "paraphrases", "text_parse")}
        return cls(text, paras, obj.get("text_parse"), extra, path, line)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        if self.parse is not None:
            out["text_parse"] = self.parse
        out["paraphrases"] = [p.to_json() for p in self.paraphrases]
        out.update(self.extra)
        return out
