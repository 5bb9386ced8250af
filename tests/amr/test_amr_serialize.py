"""The AMR serializer round trip on every gold graph (counted, not assumed) and corpus Smatch
against hand-counted triples."""

from __future__ import annotations

import pytest

from paraamr.amr.io import read_penman_blocks
from paraamr.amr.serialize import deserialize, serialize, smatch_counts, smatch_score


def test_hand_counted_triples_and_corpus_sums():
    # gold: 2 instances + 1 relation + TOP = 4 triples; test: 1 instance + TOP = 2, both matched
    gold, test = "(c / cry-01 :ARG0 (h / he))", "(c / cry-01)"
    assert smatch_counts(test, gold) == (2, 2, 4)
    s = smatch_score([test], [gold])
    assert (s["precision"], s["recall"], s["f1"]) == (1.0, 0.5, 0.6667)
    # corpus Smatch sums counts over pairs (not a mean of F1s): (2+1) / (2+2), (2+1) / (4+2)
    s = smatch_score([test, "(x / sing-01)"], [gold, "(y / sing-01 :ARG0 (z / she))"])
    assert (s["precision"], s["recall"]) == (round(4 / 4, 4), round(4 / 8, 4))
    # an answer that did not deserialize matches nothing but its gold triples still count
    s = smatch_score([None, gold], [gold, gold])
    assert (s["precision"], s["recall"], s["pairs"]) == (1.0, 0.5, 2)


def test_an_answer_smatch_cannot_read_matches_nothing_and_is_counted(capfd):
    """A parsed graph with a concept ``x:y`` (penman writes it, smatch's reader fails on it)
    scored as matching nothing, not a crash of the whole evaluation; the reader's message is in
    the error, not printed (nothing on stderr)."""
    import penman

    from paraamr.errors import AMRError

    bad = penman.Graph([("a", ":instance", "and"), ("a", ":op1", "x"), ("x", ":instance", "x:y")])
    gold = "(a / and :op1 (x / y))"  # 2 instances + 1 relation + TOP = 4 triples
    with pytest.raises(AMRError, match=r"\(Error processing .*x:y"):
        smatch_counts(penman.encode(bad), gold)
    # by hand: bad: 0 matched of its 3 penman triples + TOP; "(h / he)": 2 of 2 matched
    s = smatch_score([bad, "(h / he)"], [gold, "(h / he)"])
    assert (s["precision"], s["recall"], s["unreadable"]) == (round(2 / 6, 4), round(2 / 6, 4), 1)
    assert capfd.readouterr().err == ""
    with pytest.raises(AMRError):  # a gold graph smatch cannot read is still an error
        smatch_score(["(h / he)"], [bad])


def test_serialized_graphs_have_no_variables_and_concepts_told_apart():
    g = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :ARG1 (b2 / boy)))"
    tokens = serialize(g).split()
    assert "w" not in tokens and "b" not in tokens
    assert tokens.count("boy_0") == 2 and tokens.count("boy_1") == 1  # re-entrancy kept
    assert smatch_score([deserialize(serialize(g))], [g])["f1"] == 1.0
    assert deserialize(")") is None


@pytest.mark.parametrize("answer", [
    # a trained parser's answer: amrlib reads ``over:`` as ``over`` and a role ``:`` with no target
    "( over: 100 :ARG1 ( cowboy :time ( day :mod ( year ) ) ) )",
    "( over : :ARG1 ( cowboy ) )",  # a role with no name
])  # fmt: skip
def test_an_answer_read_with_an_edge_without_target_or_role_is_no_graph(answer):
    import penman

    from paraamr.amr.serialize import dangling_edges

    assert deserialize(answer) is None
    # what amrlib's deserializer builds from it, by hand: the edge that makes it no AMR
    assert dangling_edges(penman.decode("(o / over :ARG1 (c / cowboy) :op1)")) == [
        ("o", ":op1", None)]  # fmt: skip


def test_round_trip_on_the_first_little_prince_graphs(data_dir):
    path = data_dir / "amr" / "amr-bank-struct-v3.0.txt"
    blocks = [b for _, b in zip(range(150), read_penman_blocks(path), strict=False)]
    back = [deserialize(serialize(b.graph)) for b in blocks]
    assert smatch_score(back, [b.graph for b in blocks])["f1"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["amr-bank-struct-v3.0.txt", "amr-release-dev-bio.txt"])
def test_round_trip_on_every_gold_graph(data_dir, name):
    """Measured: all 1,562 Little Prince and 500 Bio graphs deserialize; with smatch's default 5
    restarts 1,560 and 485-490 come back with Smatch 1.0 (the count moves with Python's hash
    seed: smatch's search, not the round trip: with 20 restarts all 1,562 Little Prince graphs
    score 1.0); corpus F1 0.9988 (Little Prince) and 0.9968-0.9988 (Bio, by hash seed). The
    floors sit just under those numbers."""
    blocks = [b for b in read_penman_blocks(data_dir / "amr" / name) if b.graph is not None]
    back = [deserialize(serialize(b.graph)) for b in blocks]
    assert all(g is not None for g in back)
    scores = [smatch_score([g], [b.graph])["f1"] for g, b in zip(back, blocks, strict=True)]
    counts = {
        "amr-bank-struct-v3.0.txt": (1562, 1555, 0.998),
        "amr-release-dev-bio.txt": (500, 480, 0.995),
    }
    n, floor, f1 = counts[name]
    assert len(blocks) == n and sum(f == 1.0 for f in scores) >= floor
    assert smatch_score(back, [b.graph for b in blocks])["f1"] >= f1
