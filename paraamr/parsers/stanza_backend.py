"""The paper's parser: stanza's English constituency parser (``tokenize,pos,constituency``).

Models are not downloaded implicitly. Online users fetch them once with::

    python -c "import stanza; stanza.download('en', processors='tokenize,pos,constituency')"

or ``make models-stanza``. One input string is parsed as one sentence (``tokenize_no_ssplit``),
as the ParaAMR scripts expect one tree per sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from paraamr.errors import ParserError
from paraamr.parsers.types import Parsed

__all__ = ["StanzaParser", "tree_to_parsed", "DOWNLOAD_HINT"]

DOWNLOAD_HINT = (
    "stanza's English models are not installed. Download them once (needs network):\n"
    "  python -c \"import stanza; stanza.download('en', "
    "processors='tokenize,pos,constituency')\"\n"
    "or run `make models-stanza`; set model_dir= if you keep them elsewhere. "
    "Offline, use parser=spacy."
)


def tree_to_parsed(tree) -> Parsed:
    """Convert a stanza constituency ``Tree`` to :class:`Parsed` (tokens = its leaves).

    >>> from stanza.models.constituency.tree_reader import read_trees
    >>> tree_to_parsed(read_trees("(ROOT (S (NP (PRP I)) (VP (VBP know))))")[0]).tokens
    ('I', 'know')
    """
    return Parsed(tuple(tree.leaf_labels()), str(tree))


class StanzaParser:
    """Batched stanza parsing; raises a clear error with the download command when models are
    missing."""

    name = "stanza"

    def __init__(
        self,
        lang: str = "en",
        model_dir: str | None = None,
        use_gpu: bool | None = None,
        batch_size: int = 256,
        max_tokens: int = 300,
        package: str = "default",
    ):
        import stanza

        self.lang, self.max_tokens, self.package = lang, max_tokens, package
        self.stanza_version = stanza.__version__
        kwargs = {"dir": model_dir} if model_dir else {}
        if use_gpu is not None:
            kwargs["use_gpu"] = use_gpu
        try:
            self.nlp = stanza.Pipeline(
                lang,
                processors="tokenize,pos,constituency",
                tokenize_no_ssplit=True,
                download_method=None,
                constituency_batch_size=batch_size,
                pos_batch_size=batch_size * 20,
                package=package,
                logging_level="WARN",
                **kwargs,
            )
        except (FileNotFoundError, OSError, ValueError) as e:
            raise ParserError(f"{DOWNLOAD_HINT}\n(stanza said: {e})") from e

    def signature(self) -> str:
        return f"stanza-{self.stanza_version}({self.lang},{self.package},tokenize+pos+constituency)"

    def parse(self, sentences: Sequence[str]) -> list[Parsed | ParserError]:
        import stanza

        out: list[Parsed | ParserError] = []
        docs = self.nlp.bulk_process([stanza.Document([], text=s) for s in sentences])
        for doc in docs:
            trees = [s.constituency for s in doc.sentences]
            n_tok = sum(len(s.words) for s in doc.sentences)
            if not trees:
                out.append(ParserError("empty sentence"))
            elif n_tok > self.max_tokens:
                out.append(ParserError(f"sentence longer than the parser accepts ({n_tok} tokens)"))
            elif len(trees) == 1:
                out.append(tree_to_parsed(trees[0]))
            else:  # cannot happen with tokenize_no_ssplit; kept safe: join under one ROOT
                inner = " ".join(str(t)[len("(ROOT ") : -1] for t in trees)
                toks = tuple(w for t in trees for w in t.leaf_labels())
                out.append(Parsed(toks, f"(ROOT {inner})"))
        return out
