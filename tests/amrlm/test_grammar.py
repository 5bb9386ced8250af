"""The parser's graph grammar: it accepts every gold graph of the data folder as the parser is
trained to write it, rejects what is not one graph of AMR roles, and a tiny model decoding
under it (PyTorch, XGrammar's matcher per row) writes only answers that decode, also when the
answer limit cuts them."""

from __future__ import annotations

import penman
import pytest

from paraamr.amr.serialize import deserialize, serialize
from paraamr.amrlm.grammar import accepts, close_graph, graph_grammar
from paraamr.amrlm.split import SPLITS, load_split


def test_every_gold_graph_is_accepted(data_dir):
    graphs = [serialize(penman.encode(e.graph)) for p in SPLITS for e in load_split(data_dir, p)]
    assert len(graphs) == 2062
    grammar = graph_grammar(40)
    rejected = [g for g in graphs if not accepts(grammar, g)]
    assert rejected == []


@pytest.mark.parametrize(
    "text",
    [
        "( a :ARG0 ( b )",  # not closed
        "( a ) ( b )",  # two graphs
        "( a :ARG0 ( b ) ) )",  # closed twice
        "( a :agent ( b ) )",  # not an AMR role
        "( a :ARG10 b )",  # ARG0-ARG9 only
        "( a :op0 b )",  # ops count from 1
        "( a :ARG0 )",  # a role without its value
        "  ( a )",  # at most one space before the bracket (a " (" token)
        "( a  :mod b )",  # one space between items
        "(a :mod b)",  # the serializer's spaced brackets
        "( :mod b )",  # no concept
        '( a :op1 "unclosed )',
        "( a~e.2 )",  # PENMAN syntax inside a concept: an alignment,
        "( a/b )",  # an instance slash
        "( #a )",  # a comment
        "( a :mod ( b :mod ( c :mod ( d ) ) ) )",  # four graphs open at once, max_depth 3
    ],
)
def test_what_is_not_one_graph_of_amr_roles_is_rejected(text):
    assert not accepts(graph_grammar(3), text)


@pytest.mark.parametrize(
    "text",
    [
        "( a :mod ( b :mod ( c ) ) )",
        "( a :ARG1-of ( b ) :op12 c :snt2 d :prep-on-behalf-of e :consist-of f )",
        '( name :op1 "New York" :wiki "New_York_City" )',
        "( have-org-role-91 :ARG2 ( amr-unknown ) :polarity - :quant 0.5 )",
    ],
)
def test_graphs_with_the_role_forms_are_accepted(text):
    assert accepts(graph_grammar(3), text)


def test_unbounded_depth():
    deep = "( a :mod " * 50 + "( z )" + " )" * 50
    assert accepts(graph_grammar(None), deep)
    assert not accepts(graph_grammar(40), deep)


@pytest.mark.parametrize(
    ("cut", "closed"),
    [
        ("( a :ARG0 ( b ) :ARG1 ( c :mod", "( a :ARG0 ( b ) :ARG1 ( c ) )"),
        ("( a :ARG0 ( b ) :ARG1 (", "( a :ARG0 ( b ) )"),
        ("( a :ARG0 ( b ) :ARG1 ( c :mod d", "( a :ARG0 ( b ) :ARG1 ( c :mod d ) )"),
        ('( n :op1 "New', '( n :op1 "New" )'),
        ("( a :AR", "( a )"),
        ("(", ""),
        ("", ""),
    ],
)
def test_a_cut_answer_is_closed_by_hand(cut, closed):
    assert close_graph(cut) == closed
    if closed:
        assert accepts(graph_grammar(None), closed)


@pytest.fixture(scope="module")
def tiny_parser(tiny_gpt2, tmp_path_factory):
    from paraamr.amrlm.module import AMRModule

    m = AMRModule(direction="parse", model_name_or_path=tiny_gpt2, max_source_length=48,
                  max_target_length=40, warmup_steps=0)  # fmt: skip
    return m.save(tmp_path_factory.mktemp("grammar") / "parser")


SENTENCES = ["the boy wants to go .", "no", "why did the cat sit on the mat ?", "it rains"]


@pytest.mark.parametrize("cap", [None, [1.0, 2.0]])
def test_a_tiny_parser_under_the_grammar_writes_only_graphs_that_decode(tiny_parser, cap):
    from paraamr.amrlm.module import AMRModule
    from paraamr.lms.answers import answers

    parser = AMRModule.from_saved(tiny_parser)
    parser.set_decoding(cap, None, constraint="grammar")
    out = answers(parser, SENTENCES, batch_size=3, progress=False)
    grammar = graph_grammar(parser.settings["max_depth"])
    assert all(accepts(grammar, a) for a in out), out
    assert all(deserialize(a) is not None for a in out), out
    if cap:  # a limit of ceil(1 x tokens + 2) cut them all: closed after it
        limits = [parser.answer_limit(s, 40) for s in SENTENCES]
        units = [len(parser.units(a)) for a in out]
        assert all(u >= lim for u, lim in zip(units, limits, strict=True))
    parser.set_decoding(None, None, constraint="brackets")
    assert answers(parser, SENTENCES, batch_size=3, progress=False) != out


def test_grammar_decoding_is_greedy_only(tiny_parser):
    from paraamr.amrlm.module import AMRModule
    from paraamr.errors import ConfigError

    parser = AMRModule.from_saved(tiny_parser)
    parser.set_decoding(None, None, constraint="grammar")
    with pytest.raises(ConfigError, match="greedily"):
        parser.generate(SENTENCES, num_beams=2)
    with pytest.raises(ConfigError, match="model.constraint must be one of"):
        parser.set_decoding(None, None, constraint="regex")


def test_brackets_let_a_spaced_bracket_close_the_graph():
    """The parser's tokenizer writes " )" as often as ")": the bracket constraint once allowed
    only the lone ")" to close the outermost graph, so a parser that wanted " )" there was made
    to go on writing roles until its answer cap (hand table: ids 0-5)."""
    from paraamr.amrlm.constraint import BalancedGraph, BracketTable

    texts = [" (", " want", " )", ")", ") (", "<eos>", " ))"]
    table = BracketTable.from_texts(texts, eos=5, close=3)
    c = BalancedGraph(table, max_new_tokens=20)
    allowed = c.mask([0, 1]).tolist()  # depth 1
    assert allowed[2] and allowed[3]  # " )" and ")" close it
    assert not allowed[4] and not allowed[5]  # ") (" would open a second graph; no end yet
    assert not allowed[6]  # " ))" closes more than is open
    assert c.mask([0, 1, 0, 1]).tolist()[6]  # depth 2: " ))" closes both
    assert c.mask([0, 1, 2]).tolist() == [False] * 5 + [True, False]  # closed: only the end
