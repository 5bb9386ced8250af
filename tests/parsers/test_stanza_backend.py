"""The stanza backend's batching and tree handling, with stanza's own Tree type (no model)."""

from types import SimpleNamespace

from stanza.models.constituency.tree_reader import read_trees

from paraamr.errors import ParserError
from paraamr.parsers.stanza_backend import StanzaParser


class FakePipeline:
    """Returns stanza documents built from bracket strings, like the real pipeline would."""

    def __init__(self, trees):
        self.trees = trees

    def bulk_process(self, docs):
        out = []
        for d in docs:
            brackets = self.trees[d.text]
            sents = []
            for b in brackets:
                t = read_trees(b)[0]
                sents.append(SimpleNamespace(constituency=t, words=t.leaf_labels()))
            out.append(SimpleNamespace(sentences=sents))
        return out


def make(trees, max_tokens=300):
    p = StanzaParser.__new__(StanzaParser)
    p.nlp, p.max_tokens, p.lang, p.package, p.stanza_version = (
        FakePipeline(trees),
        max_tokens,
        "en",
        "default",
        "x",
    )
    return p


def test_parse_returns_tokens_and_trees_in_order():
    p = make(
        {
            "I know.": ["(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))"],
            "Go.": ["(ROOT (S (VP (VB Go)) (. .)))"],
        }
    )
    a, b = p.parse(["I know.", "Go."])
    assert a.tokens == ("I", "know", ".") and b.tree == "(ROOT (S (VP (VB Go)) (. .)))"


def test_empty_and_overlong_are_failures_not_crashes():
    p = make({"": [], "long": ["(ROOT (NP (NN a) (NN b) (NN c)))"]}, max_tokens=2)
    empty, long = p.parse(["", "long"])
    assert isinstance(empty, ParserError) and isinstance(long, ParserError)
    assert "longer than the parser accepts" in str(long)
